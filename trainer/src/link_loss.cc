// LinkBatchLoss (link_loss.h).
#include "link_loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

namespace foresight::trainer::internal {
namespace {

constexpr int64_t kRowGrain = 64;

// Per-query loss and its gradients for one chunk and side: softmax (cross
// entropy of the positive against the negatives) or logistic. Negatives equal
// to the query's true entity are left out. `scale` multiplies the gradients;
// `offset` is added to every negative's logit (softmax; sampled_softmax's
// log(entities / negatives), else 0).
void QueryLosses(const ExecContext& ctx, bool softmax, float offset, const std::vector<float>& pos,
                 const Tensor& scores,
                 const int64_t* neg_keys, const int64_t* true_keys, float scale, std::vector<float>* dpos,
                 Tensor* dscores, std::vector<double>* losses) {
  const int64_t c = scores.size(0), n = scores.size(1);
  // Where each negative entity sits, so a row finds its true entity among
  // the negatives without a compare per score (the loops below stay
  // branch-free and vectorise).
  std::unordered_map<int64_t, std::vector<int64_t>> where;
  for (int64_t j = 0; j < n; ++j) where[neg_keys[j]].push_back(j);
  const float* s = scores.data<float>();
  float* g = dscores->data<float>();
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  ctx.pool->ParallelFor(c, 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float* row = s + i * n;
      float* grow = g + i * n;
      const float p = pos[static_cast<size_t>(i)];
      auto it = where.find(true_keys[i]);
      const std::vector<int64_t>* masked = it == where.end() ? nullptr : &it->second;
      if (softmax) {
        float mx = p;
        for (int64_t j = 0; j < n; ++j) {
          grow[j] = row[j] + offset;
          mx = std::max(mx, grow[j]);
        }
        if (masked != nullptr) {
          for (int64_t j : *masked) grow[j] = kMasked;
          mx = p;
          for (int64_t j = 0; j < n; ++j) mx = std::max(mx, grow[j]);
        }
        float z = 0.0f;
        for (int64_t j = 0; j < n; ++j) {
          grow[j] = std::exp(grow[j] - mx);
          z += grow[j];
        }
        const float ep = std::exp(p - mx);
        z += ep;
        const float k = scale / z;
        for (int64_t j = 0; j < n; ++j) grow[j] *= k;
        (*dpos)[static_cast<size_t>(i)] = (ep / z - 1.0f) * scale;
        (*losses)[static_cast<size_t>(i)] = static_cast<double>(std::log(z)) + mx - p;
      } else {
        const int64_t valid = n - (masked != nullptr ? static_cast<int64_t>(masked->size()) : 0);
        const float w = valid > 0 ? 1.0f / static_cast<float>(valid) : 0.0f;
        float l = 0.0f;
        for (int64_t j = 0; j < n; ++j) {
          const float x = row[j];
          l += x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));  // softplus
          grow[j] = w / (1.0f + std::exp(-x)) * scale;                        // sigmoid
        }
        if (masked != nullptr) {
          for (int64_t j : *masked) {
            const float x = row[j];
            l -= x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
            grow[j] = 0.0f;
          }
        }
        double total = static_cast<double>(w) * l;
        total += p > 0 ? std::log1p(std::exp(-p)) : -p + std::log1p(std::exp(p));  // softplus(-p)
        (*dpos)[static_cast<size_t>(i)] = -1.0f / (1.0f + std::exp(p)) * scale;  // -sigmoid(-p)
        (*losses)[static_cast<size_t>(i)] = total;
      }
    }
  });
}

// Adds the regulariser of rows [rows, rows + n) of x (dim floats each) to
// grad, returns its value. l2: w sum x^2; l3: w sum |z|^3 over the row's
// moduli (complex: pairs (x_k, x_{k + dim/2}); otherwise |x_k|).
double Regularize(const std::string& kind, bool complex, float weight, const float* x, int64_t n, int64_t dim,
                  float* grad) {
  double value = 0.0;
  const int64_t half = dim / 2;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = x + i * dim;
    float* g = grad + i * dim;
    if (kind == "l2") {
      for (int64_t k = 0; k < dim; ++k) {
        value += weight * row[k] * row[k];
        g[k] += 2.0f * weight * row[k];
      }
    } else if (complex) {
      for (int64_t k = 0; k < half; ++k) {
        const float a = row[k], b = row[k + half];
        const float mod = std::sqrt(a * a + b * b);
        value += weight * mod * mod * mod;
        g[k] += 3.0f * weight * mod * a;
        g[k + half] += 3.0f * weight * mod * b;
      }
    } else {
      for (int64_t k = 0; k < dim; ++k) {
        const float a = std::fabs(row[k]);
        value += weight * a * a * a;
        g[k] += 3.0f * weight * a * row[k];
      }
    }
  }
  return value;
}


}  // namespace

Status LinkBatchLoss(const ExecContext& ctx, const TrainOptions& o, const LinkScorer& scorer, int64_t num_entities,
                     const LinkBatch& b, const Tensor& e, const Tensor& r, Tensor* de, Tensor* dr, double* loss) {
  const int64_t d = scorer.dim(), B = b.size, N = b.negatives;
  const int64_t KR = static_cast<int64_t>(b.relation_keys.size());
  const float* ep = e.data<float>();
  const float* rp = r.data<float>();
  float* dep = de->data<float>();
  float* drp = dr->data<float>();
  const int64_t mean_over = b.loss_size > 0 ? b.loss_size : B;  // a rank's part: the global batch
  const float scale = 1.0f / static_cast<float>(2 * mean_over);
  const bool softmax = o.loss == "softmax";
  const float offset =
      o.sampled_softmax ? std::log(static_cast<float>(num_entities) / static_cast<float>(N)) : 0.0f;
  double total = 0.0;
  std::vector<float> pos, dpos;
  std::vector<double> losses;
  for (int64_t c = 0; c < b.num_chunks; ++c) {
    const int64_t c0 = c * b.chunk, c1 = std::min(B, c0 + b.chunk), cn = c1 - c0;
    for (LinkSide corrupt : {LinkSide::kTail, LinkSide::kHead}) {
      const bool tail = corrupt == LinkSide::kTail;
      // With reciprocal relations a head corruption is a tail corruption
      // of (t, r', ?) with r' the reverse row (positions B.. of r).
      const LinkSide side = o.reciprocal ? LinkSide::kTail : corrupt;
      const int64_t rel = (o.reciprocal && !tail) ? B + c0 : c0;
      // anchor rows (h for tail corruption), true rows (t), negatives.
      const int64_t anchor = tail ? c0 : B + c0;
      const int64_t truth = tail ? B + c0 : c0;
      const int64_t negs = tail ? b.TailNegatives(c) : b.HeadNegatives(c);
      Tensor q = Tensor::Empty({cn, d}, DType::kF32);
      Tensor dq = Tensor::Zeros({cn, d}, DType::kF32);
      float* qp = q.data<float>();
      pos.assign(static_cast<size_t>(cn), 0.0f);
      dpos.assign(static_cast<size_t>(cn), 0.0f);
      losses.assign(static_cast<size_t>(cn), 0.0);
      ctx.pool->ParallelFor(cn, kRowGrain, [&](int64_t s, int64_t t) {
        for (int64_t i = s; i < t; ++i) {
          scorer.Query(side, ep + (anchor + i) * d, rp + (rel + i) * d, qp + i * d);
          pos[static_cast<size_t>(i)] = scorer.Pair(qp + i * d, ep + (truth + i) * d);
        }
      });
      Tensor scores = Tensor::Empty({cn, N}, DType::kF32);
      const Tensor x = e.Slice(0, negs, negs + N);
      FS_RETURN_IF_ERROR(scorer.Scores(ctx, q, x, &scores));
      Tensor dscores = Tensor::Empty({cn, N}, DType::kF32);
      QueryLosses(ctx, softmax, offset, pos, scores, b.entity_keys.data() + negs, b.entity_keys.data() + truth, scale,
                  &dpos, &dscores, &losses);
      for (double l : losses) total += l;
      Tensor dx = de->Slice(0, negs, negs + N);
      FS_RETURN_IF_ERROR(scorer.ScoresBackward(ctx, q, x, scores, &dscores, &dq, &dx));
      float* dqp = dq.data<float>();
      ctx.pool->ParallelFor(cn, kRowGrain, [&](int64_t s, int64_t t) {
        for (int64_t i = s; i < t; ++i) {
          scorer.PairBackward(qp + i * d, ep + (truth + i) * d, dpos[static_cast<size_t>(i)], dqp + i * d,
                               dep + (truth + i) * d);
          scorer.QueryBackward(side, ep + (anchor + i) * d, rp + (rel + i) * d, dqp + i * d,
                                dep + (anchor + i) * d, drp + (rel + i) * d);
        }
      });
    }
  }
  total *= scale;
  if (o.regularizer != "none" && o.regularization_weight > 0.0f) {
    const float w = o.regularization_weight / static_cast<float>(mean_over);
    const bool complex = scorer.kind() == LinkScorer::Kind::kComplEx;
    total += Regularize(o.regularizer, complex, w, ep, 2 * B, d, dep);  // heads and tails
    if (scorer.uses_relation()) total += Regularize(o.regularizer, complex, w, rp, KR, d, drp);
  }
  *loss = total;
  return Status::OK();
}

}  // namespace foresight::trainer::internal
