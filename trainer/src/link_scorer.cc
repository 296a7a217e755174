// LinkScorer (link_scorer.h): the per-row algebra of each model and the
// GEMM-shaped many-candidate scores with their backward.
#include "link_scorer.h"

#include <cmath>
#include <vector>

#include "foresight/kernels/ops.h"

namespace foresight::trainer::internal {
namespace {

constexpr int64_t kRowGrain = 64;      // rows per parallel chunk
constexpr float kMinDistance = 1e-9f;  // TransE: no gradient through a zero distance

float Dot(const float* a, const float* b, int64_t n) {
  float s = 0.0f;
  for (int64_t k = 0; k < n; ++k) s += a[k] * b[k];
  return s;
}

}  // namespace

StatusOr<LinkScorer> LinkScorer::Create(const std::string& model, int64_t dim, float margin) {
  Kind kind;
  if (model == "distmult") {
    kind = Kind::kDistMult;
  } else if (model == "complex") {
    kind = Kind::kComplEx;
    if (dim % 2 != 0) return InvalidArgument("complex needs an even dim, got " + std::to_string(dim));
  } else if (model == "transe") {
    kind = Kind::kTransE;
  } else if (model == "dot") {
    kind = Kind::kDot;
  } else {
    return InvalidArgument("link model '" + model + "' is not one of distmult, complex, transe, dot");
  }
  if (dim < 1) return InvalidArgument("link model dim must be >= 1, got " + std::to_string(dim));
  return LinkScorer(kind, dim, margin);
}

void LinkScorer::Query(LinkSide side, const float* a, const float* r, float* q) const {
  const int64_t d = dim_;
  switch (kind_) {
    case Kind::kDistMult:
      for (int64_t k = 0; k < d; ++k) q[k] = a[k] * r[k];
      return;
    case Kind::kComplEx: {
      const int64_t h = d / 2;
      const float *ar = a, *ai = a + h, *rr = r, *ri = r + h;
      float *qr = q, *qi = q + h;
      if (side == LinkSide::kTail) {  // q = a * r
        for (int64_t k = 0; k < h; ++k) {
          qr[k] = ar[k] * rr[k] - ai[k] * ri[k];
          qi[k] = ar[k] * ri[k] + ai[k] * rr[k];
        }
      } else {  // Re<h, r, conj(t)> = <h, q> with q = conj(r) * t
        for (int64_t k = 0; k < h; ++k) {
          qr[k] = rr[k] * ar[k] + ri[k] * ai[k];
          qi[k] = rr[k] * ai[k] - ri[k] * ar[k];
        }
      }
      return;
    }
    case Kind::kTransE:
      if (side == LinkSide::kTail) {
        for (int64_t k = 0; k < d; ++k) q[k] = a[k] + r[k];
      } else {
        for (int64_t k = 0; k < d; ++k) q[k] = a[k] - r[k];
      }
      return;
    case Kind::kDot:
      for (int64_t k = 0; k < d; ++k) q[k] = a[k];
      return;
  }
}

void LinkScorer::QueryBackward(LinkSide side, const float* a, const float* r, const float* dq, float* da,
                               float* dr) const {
  const int64_t d = dim_;
  switch (kind_) {
    case Kind::kDistMult:
      for (int64_t k = 0; k < d; ++k) {
        da[k] += dq[k] * r[k];
        dr[k] += dq[k] * a[k];
      }
      return;
    case Kind::kComplEx: {
      const int64_t h = d / 2;
      const float *ar = a, *ai = a + h, *rr = r, *ri = r + h, *gr = dq, *gi = dq + h;
      float *dar = da, *dai = da + h, *drr = dr, *dri = dr + h;
      if (side == LinkSide::kTail) {
        for (int64_t k = 0; k < h; ++k) {
          dar[k] += gr[k] * rr[k] + gi[k] * ri[k];
          dai[k] += -gr[k] * ri[k] + gi[k] * rr[k];
          drr[k] += gr[k] * ar[k] + gi[k] * ai[k];
          dri[k] += -gr[k] * ai[k] + gi[k] * ar[k];
        }
      } else {
        for (int64_t k = 0; k < h; ++k) {
          dar[k] += gr[k] * rr[k] - gi[k] * ri[k];
          dai[k] += gr[k] * ri[k] + gi[k] * rr[k];
          drr[k] += gr[k] * ar[k] + gi[k] * ai[k];
          dri[k] += gr[k] * ai[k] - gi[k] * ar[k];
        }
      }
      return;
    }
    case Kind::kTransE: {
      const float sign = side == LinkSide::kTail ? 1.0f : -1.0f;
      for (int64_t k = 0; k < d; ++k) {
        da[k] += dq[k];
        dr[k] += sign * dq[k];
      }
      return;
    }
    case Kind::kDot:
      for (int64_t k = 0; k < d; ++k) da[k] += dq[k];
      return;
  }
}

float LinkScorer::Pair(const float* q, const float* x) const {
  if (kind_ != Kind::kTransE) return Dot(q, x, dim_);
  float s = 0.0f;
  for (int64_t k = 0; k < dim_; ++k) {
    const float v = q[k] - x[k];
    s += v * v;
  }
  return margin_ - std::sqrt(s);
}

void LinkScorer::PairBackward(const float* q, const float* x, float g, float* dq, float* dx) const {
  if (kind_ != Kind::kTransE) {
    for (int64_t k = 0; k < dim_; ++k) {
      dq[k] += g * x[k];
      dx[k] += g * q[k];
    }
    return;
  }
  const float dist = margin_ - Pair(q, x);
  if (dist < kMinDistance) return;
  const float c = -g / dist;  // d(-||q - x||)/dq = -(q - x) / dist
  for (int64_t k = 0; k < dim_; ++k) {
    const float v = c * (q[k] - x[k]);
    dq[k] += v;
    dx[k] -= v;
  }
}

Status LinkScorer::Scores(const ExecContext& ctx, const Tensor& q, const Tensor& x, Tensor* scores) const {
  if (kind_ != Kind::kTransE) return kernels::Gemm(ctx, q, false, x, true, 1.0f, 0.0f, scores);
  // ||q - x||^2 = |q|^2 + |x|^2 - 2 q.x: the cross term is the GEMM.
  FS_RETURN_IF_ERROR(kernels::Gemm(ctx, q, false, x, true, -2.0f, 0.0f, scores));
  const int64_t n = q.size(0), m = x.size(0), d = dim_;
  std::vector<float> xn(static_cast<size_t>(m));
  const float* xp = x.data<float>();
  const int64_t xs = x.stride(0), qs = q.stride(0);
  ctx.pool->ParallelFor(m, kRowGrain, [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j) xn[static_cast<size_t>(j)] = Dot(xp + j * xs, xp + j * xs, d);
  });
  const float* qp = q.data<float>();
  float* s = scores->data<float>();
  const int64_t ss = scores->stride(0);
  const float margin = margin_;
  ctx.pool->ParallelFor(n, kRowGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float qn = Dot(qp + i * qs, qp + i * qs, d);
      float* row = s + i * ss;
      for (int64_t j = 0; j < m; ++j) {
        const float d2 = qn + xn[static_cast<size_t>(j)] + row[j];
        row[j] = margin - std::sqrt(d2 > 0.0f ? d2 : 0.0f);
      }
    }
  });
  return Status::OK();
}

Status LinkScorer::ScoresBackward(const ExecContext& ctx, const Tensor& q, const Tensor& x, const Tensor& scores,
                                  Tensor* dscores, Tensor* dq, Tensor* dx) const {
  if (kind_ != Kind::kTransE) {
    FS_RETURN_IF_ERROR(kernels::Gemm(ctx, *dscores, false, x, false, 1.0f, 1.0f, dq));
    return kernels::Gemm(ctx, *dscores, true, q, false, 1.0f, 0.0f, dx);
  }
  // s = margin - sqrt(D2): dD2 = ds * -1 / (2 dist). Then
  // dq_i += 2 q_i sum_j G_ij - 2 sum_j G_ij x_j, and likewise for x.
  const int64_t n = q.size(0), m = x.size(0), d = dim_;
  const float* s = scores.data<float>();
  float* g = dscores->data<float>();
  const int64_t ss = scores.stride(0), gs = dscores->stride(0);
  const float margin = margin_;
  std::vector<float> row_sum(static_cast<size_t>(n)), col_sum(static_cast<size_t>(m), 0.0f);
  ctx.pool->ParallelFor(n, kRowGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float acc = 0.0f;
      for (int64_t j = 0; j < m; ++j) {
        const float dist = margin - s[i * ss + j];
        float& v = g[i * gs + j];
        v = dist < kMinDistance ? 0.0f : v * (-0.5f / dist);
        acc += v;
      }
      row_sum[static_cast<size_t>(i)] = acc;
    }
  });
  // Column sums in row order (fixed, whatever the thread count).
  ctx.pool->ParallelFor(m, 256, [&](int64_t b, int64_t e) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = b; j < e; ++j) col_sum[static_cast<size_t>(j)] += g[i * gs + j];
    }
  });
  FS_RETURN_IF_ERROR(kernels::Gemm(ctx, *dscores, false, x, false, -2.0f, 1.0f, dq));
  FS_RETURN_IF_ERROR(kernels::Gemm(ctx, *dscores, true, q, false, -2.0f, 0.0f, dx));
  const float* qp = q.data<float>();
  const float* xp = x.data<float>();
  float* dqp = dq->data<float>();
  float* dxp = dx->data<float>();
  const int64_t qs = q.stride(0), xs = x.stride(0), dqs = dq->stride(0), dxs = dx->stride(0);
  for (int64_t i = 0; i < n; ++i) {
    const float c = 2.0f * row_sum[static_cast<size_t>(i)];
    for (int64_t k = 0; k < d; ++k) dqp[i * dqs + k] += c * qp[i * qs + k];
  }
  for (int64_t j = 0; j < m; ++j) {
    const float c = 2.0f * col_sum[static_cast<size_t>(j)];
    for (int64_t k = 0; k < d; ++k) dxp[j * dxs + k] += c * xp[j * xs + k];
  }
  return Status::OK();
}

}  // namespace foresight::trainer::internal
