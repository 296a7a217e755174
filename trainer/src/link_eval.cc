// EvaluateRanking (link_eval.h): candidates are read in blocks (a table on
// disk is never read whole), queries scored against a block in chunks by
// the scorer's GEMM, the true and filtered entities masked, and higher /
// equal scores counted per query.
#include "link_eval.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace foresight::trainer::internal {
namespace {

constexpr int64_t kCandidateBlock = 8192;  // candidate rows read at a time
constexpr int64_t kQueryChunk = 512;       // queries per GEMM

}  // namespace

void KnownTriples::Add(const Tensor& triples) {
  const int64_t* p = triples.data<int64_t>();
  const int64_t m = triples.size(0);
  for (int64_t i = 0; i < m; ++i) {
    const int64_t h = p[3 * i], r = p[3 * i + 1], t = p[3 * i + 2];
    tails_[h * num_relations_ + r].push_back(t);
    heads_[t * num_relations_ + r].push_back(h);
  }
}

Status EvaluateRanking(const ExecContext& ctx, const LinkScorer& scorer, const EmbeddingReader& entities,
                       const EmbeddingReader& relations, int64_t num_entities, const Tensor& triples,
                       const KnownTriples& known, const std::vector<int64_t>& sampled, RankMetrics* out,
                       int64_t reverse_offset) {
  *out = RankMetrics();
  const int64_t m = triples.size(0), d = scorer.dim();
  if (m == 0) return Status::OK();
  const int64_t* tp = triples.data<int64_t>();
  // Query rows: [0, m) rank tails of (h, r, ?), [m, 2m) heads of (?, r, t).
  std::vector<int64_t> heads(static_cast<size_t>(m)), rels(static_cast<size_t>(m)), tails(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    heads[static_cast<size_t>(i)] = tp[3 * i];
    rels[static_cast<size_t>(i)] = tp[3 * i + 1];
    tails[static_cast<size_t>(i)] = tp[3 * i + 2];
  }
  Tensor h = Tensor::Empty({m, d}, DType::kF32), r = Tensor::Empty({m, d}, DType::kF32),
         t = Tensor::Empty({m, d}, DType::kF32);
  FS_RETURN_IF_ERROR(entities(heads, h.data<float>()));
  FS_RETURN_IF_ERROR(entities(tails, t.data<float>()));
  FS_RETURN_IF_ERROR(relations(rels, r.data<float>()));
  Tensor rr = r;  // the head queries' relation rows
  if (reverse_offset > 0) {
    std::vector<int64_t> reverse(rels);
    for (int64_t& k : reverse) k += reverse_offset;
    rr = Tensor::Empty({m, d}, DType::kF32);
    FS_RETURN_IF_ERROR(relations(reverse, rr.data<float>()));
  }
  const int64_t nq = 2 * m;
  Tensor q = Tensor::Empty({nq, d}, DType::kF32);
  std::vector<float> truth(static_cast<size_t>(nq));
  std::vector<int64_t> answer(static_cast<size_t>(nq));
  std::vector<const std::vector<int64_t>*> filtered(static_cast<size_t>(nq));
  for (int64_t i = 0; i < m; ++i) {
    const float* hi = h.data<float>() + i * d;
    const float* ri = r.data<float>() + i * d;
    const float* ti = t.data<float>() + i * d;
    float* qt = q.data<float>() + i * d;
    float* qh = q.data<float>() + (m + i) * d;
    scorer.Query(LinkSide::kTail, hi, ri, qt);
    if (reverse_offset > 0) {
      scorer.Query(LinkSide::kTail, ti, rr.data<float>() + i * d, qh);
    } else {
      scorer.Query(LinkSide::kHead, ti, ri, qh);
    }
    truth[static_cast<size_t>(i)] = scorer.Pair(qt, ti);
    truth[static_cast<size_t>(m + i)] = scorer.Pair(qh, hi);
    answer[static_cast<size_t>(i)] = tails[static_cast<size_t>(i)];
    answer[static_cast<size_t>(m + i)] = heads[static_cast<size_t>(i)];
    filtered[static_cast<size_t>(i)] = known.Tails(heads[static_cast<size_t>(i)], rels[static_cast<size_t>(i)]);
    filtered[static_cast<size_t>(m + i)] = known.Heads(tails[static_cast<size_t>(i)], rels[static_cast<size_t>(i)]);
  }

  std::vector<int64_t> all;
  if (sampled.empty()) {
    all.resize(static_cast<size_t>(num_entities));
    std::iota(all.begin(), all.end(), int64_t{0});
  }
  const std::vector<int64_t>& cand = sampled.empty() ? all : sampled;
  const int64_t nc = static_cast<int64_t>(cand.size());
  std::vector<int64_t> higher(static_cast<size_t>(nq), 0), equal(static_cast<size_t>(nq), 0);
  const int64_t block = std::min(kCandidateBlock, std::max<int64_t>(nc, 1));
  Tensor x = Tensor::Empty({block, d}, DType::kF32);
  Tensor s = Tensor::Empty({kQueryChunk, block}, DType::kF32);
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  for (int64_t c0 = 0; c0 < nc; c0 += block) {
    const int64_t c1 = std::min(nc, c0 + block), bn = c1 - c0;
    const std::vector<int64_t> keys(cand.begin() + c0, cand.begin() + c1);
    FS_RETURN_IF_ERROR(entities(keys, x.data<float>()));
    const Tensor xb = x.Slice(0, 0, bn);
    for (int64_t q0 = 0; q0 < nq; q0 += kQueryChunk) {
      const int64_t q1 = std::min(nq, q0 + kQueryChunk);
      Tensor sb = s.Slice(0, 0, q1 - q0).Slice(1, 0, bn);
      FS_RETURN_IF_ERROR(scorer.Scores(ctx, q.Slice(0, q0, q1), xb, &sb));
      float* sp = sb.data<float>();
      const int64_t ss = sb.stride(0);
      ctx.pool->ParallelFor(q1 - q0, 16, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const size_t qi = static_cast<size_t>(q0 + i);
          float* row = sp + i * ss;
          auto mask = [&](int64_t key) {
            auto it = std::lower_bound(keys.begin(), keys.end(), key);
            if (it != keys.end() && *it == key) row[it - keys.begin()] = kMasked;
          };
          mask(answer[qi]);
          if (filtered[qi] != nullptr) {
            for (int64_t k : *filtered[qi]) mask(k);
          }
          const float target = truth[qi];
          int64_t hi = 0, eq = 0;
          for (int64_t j = 0; j < bn; ++j) {
            hi += row[j] > target;
            eq += row[j] == target;
          }
          higher[qi] += hi;
          equal[qi] += eq;
        }
      });
    }
  }
  for (int64_t i = 0; i < nq; ++i) {
    const double rank = 1.0 + static_cast<double>(higher[static_cast<size_t>(i)]) +
                        0.5 * static_cast<double>(equal[static_cast<size_t>(i)]);
    out->mrr += 1.0 / rank;
    out->hits1 += rank <= 1.0;
    out->hits3 += rank <= 3.0;
    out->hits10 += rank <= 10.0;
  }
  out->queries = nq;
  out->mrr /= static_cast<double>(nq);
  out->hits1 /= static_cast<double>(nq);
  out->hits3 /= static_cast<double>(nq);
  out->hits10 /= static_cast<double>(nq);
  return Status::OK();
}

}  // namespace foresight::trainer::internal
