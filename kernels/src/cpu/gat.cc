// GAT edge attention: scores, per-destination softmax over edges, and the
// alpha-weighted aggregation per head. Per-destination quantities loop over
// the destination's edges in CSR order; per-source gradients gather over the
// transposed CSR (rows in ascending edge position), so every sum has a fixed
// order and no atomics are needed.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

namespace {

inline float LeakyRelu(float s, float slope) { return s > 0.0f ? s : s * slope; }
inline float LeakyReluGrad(float s, float slope) { return s > 0.0f ? 1.0f : slope; }

template <typename I>
void Scores(const ExecContext& ctx, const Csr& csr, const Tensor& el, const Tensor& er, float slope,
            Tensor* scores) {
  const int64_t num_dst = csr.num_dst(), h = el.size(1);
  const int64_t* ip = csr.indptr.data<int64_t>();
  const I* idx = csr.indices.data<I>();
  const float* pl = el.data<float>();
  const float* pr = er.data<float>();
  float* ps = scores->data<float>();
  ctx.pool->ParallelFor(num_dst, DstGrain(num_dst, csr.num_edges(), h), [&](int64_t v0, int64_t v1) {
    for (int64_t v = v0; v < v1; ++v) {
      const float* r = pr + v * h;
      for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
        const float* l = pl + static_cast<int64_t>(idx[e]) * h;
        float* s = ps + e * h;
        for (int64_t j = 0; j < h; ++j) s[j] = LeakyRelu(l[j] + r[j], slope);
      }
    }
  });
}

template <typename I>
void ScoresBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t, const Tensor& edge_perm,
                    const Tensor& el, const Tensor& er, float slope, const Tensor& grad_scores,
                    Tensor* grad_el, Tensor* grad_er) {
  const int64_t num_dst = csr.num_dst(), num_src = csr.num_src, h = el.size(1);
  const int64_t num_edges = csr.num_edges();
  const float* pl = el.data<float>();
  const float* pr = er.data<float>();
  const float* pg = grad_scores.data<float>();
  if (grad_er != nullptr) {
    const int64_t* ip = csr.indptr.data<int64_t>();
    const I* idx = csr.indices.data<I>();
    float* out = grad_er->data<float>();
    ctx.pool->ParallelFor(num_dst, DstGrain(num_dst, num_edges, h), [&](int64_t v0, int64_t v1) {
      for (int64_t v = v0; v < v1; ++v) {
        const float* r = pr + v * h;
        float* o = out + v * h;
        std::fill(o, o + h, 0.0f);
        for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
          const float* l = pl + static_cast<int64_t>(idx[e]) * h;
          const float* g = pg + e * h;
          for (int64_t j = 0; j < h; ++j) o[j] += g[j] * LeakyReluGrad(l[j] + r[j], slope);
        }
      }
    });
  }
  if (grad_el != nullptr) {
    const int64_t* tp = csr_t.indptr.data<int64_t>();
    const I* tidx = csr_t.indices.data<I>();
    const int64_t* perm = edge_perm.data<int64_t>();
    float* out = grad_el->data<float>();
    ctx.pool->ParallelFor(num_src, DstGrain(num_src, num_edges, h), [&](int64_t u0, int64_t u1) {
      for (int64_t u = u0; u < u1; ++u) {
        const float* l = pl + u * h;
        float* o = out + u * h;
        std::fill(o, o + h, 0.0f);
        for (int64_t k = tp[u]; k < tp[u + 1]; ++k) {
          const float* r = pr + static_cast<int64_t>(tidx[k]) * h;
          const float* g = pg + perm[k] * h;
          for (int64_t j = 0; j < h; ++j) o[j] += g[j] * LeakyReluGrad(l[j] + r[j], slope);
        }
      }
    });
  }
}

void Softmax(const ExecContext& ctx, const Csr& csr, const Tensor& scores, Tensor* out) {
  const int64_t num_dst = csr.num_dst(), h = scores.size(1);
  const int64_t* ip = csr.indptr.data<int64_t>();
  const float* ps = scores.data<float>();
  float* po = out->data<float>();
  ctx.pool->ParallelFor(num_dst, DstGrain(num_dst, csr.num_edges(), h), [&](int64_t v0, int64_t v1) {
    std::vector<float> m(static_cast<size_t>(h)), sum(static_cast<size_t>(h));
    for (int64_t v = v0; v < v1; ++v) {
      const int64_t e0 = ip[v], e1 = ip[v + 1];
      if (e0 == e1) continue;
      std::fill(m.begin(), m.end(), -INFINITY);
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (int64_t e = e0; e < e1; ++e) {
        for (int64_t j = 0; j < h; ++j) m[j] = std::fmax(m[j], ps[e * h + j]);
      }
      for (int64_t e = e0; e < e1; ++e) {
        for (int64_t j = 0; j < h; ++j) {
          const float x = std::exp(ps[e * h + j] - m[j]);
          po[e * h + j] = x;
          sum[j] += x;
        }
      }
      for (int64_t e = e0; e < e1; ++e) {
        for (int64_t j = 0; j < h; ++j) po[e * h + j] /= sum[j];
      }
    }
  });
}

void SoftmaxBackward(const ExecContext& ctx, const Csr& csr, const Tensor& out, const Tensor& grad_out,
                     Tensor* grad_scores) {
  const int64_t num_dst = csr.num_dst(), h = out.size(1);
  const int64_t* ip = csr.indptr.data<int64_t>();
  const float* py = out.data<float>();
  const float* pg = grad_out.data<float>();
  float* po = grad_scores->data<float>();
  ctx.pool->ParallelFor(num_dst, DstGrain(num_dst, csr.num_edges(), h), [&](int64_t v0, int64_t v1) {
    std::vector<float> dot(static_cast<size_t>(h));
    for (int64_t v = v0; v < v1; ++v) {
      std::fill(dot.begin(), dot.end(), 0.0f);
      for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
        for (int64_t j = 0; j < h; ++j) dot[j] += py[e * h + j] * pg[e * h + j];
      }
      for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
        for (int64_t j = 0; j < h; ++j) po[e * h + j] = py[e * h + j] * (pg[e * h + j] - dot[j]);
      }
    }
  });
}

template <typename I>
void Aggregate(const ExecContext& ctx, const Csr& csr, const Tensor& alpha, const Tensor& x, Tensor* out) {
  const int64_t num_dst = csr.num_dst(), h = alpha.size(1), d = x.size(2), hd = h * d;
  const int64_t* ip = csr.indptr.data<int64_t>();
  const I* idx = csr.indices.data<I>();
  const float* pa = alpha.data<float>();
  const float* px = x.data<float>();
  float* po = out->data<float>();
  ctx.pool->ParallelFor(num_dst, DstGrain(num_dst, csr.num_edges(), hd), [&](int64_t v0, int64_t v1) {
    for (int64_t v = v0; v < v1; ++v) {
      float* __restrict o = po + v * hd;
      std::fill(o, o + hd, 0.0f);
      for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
        const float* __restrict xr = px + static_cast<int64_t>(idx[e]) * hd;
        for (int64_t j = 0; j < h; ++j) {
          const float a = pa[e * h + j];
          float* __restrict oh = o + j * d;
          const float* __restrict xh = xr + j * d;
          for (int64_t k = 0; k < d; ++k) oh[k] += a * xh[k];
        }
      }
    }
  });
}

template <typename I>
void AggregateBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t, const Tensor& edge_perm,
                       const Tensor& alpha, const Tensor& x, const Tensor& grad_out, Tensor* grad_alpha,
                       Tensor* grad_x) {
  const int64_t num_dst = csr.num_dst(), num_src = csr.num_src, num_edges = csr.num_edges();
  const int64_t h = alpha.size(1), d = x.size(2), hd = h * d;
  const float* pa = alpha.data<float>();
  const float* px = x.data<float>();
  const float* pg = grad_out.data<float>();
  if (grad_alpha != nullptr) {
    const int64_t* ip = csr.indptr.data<int64_t>();
    const I* idx = csr.indices.data<I>();
    float* out = grad_alpha->data<float>();
    ctx.pool->ParallelFor(num_dst, DstGrain(num_dst, num_edges, hd), [&](int64_t v0, int64_t v1) {
      for (int64_t v = v0; v < v1; ++v) {
        const float* g = pg + v * hd;
        for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
          const float* xr = px + static_cast<int64_t>(idx[e]) * hd;
          for (int64_t j = 0; j < h; ++j) {
            float s = 0.0f;
            for (int64_t k = 0; k < d; ++k) s += g[j * d + k] * xr[j * d + k];
            out[e * h + j] = s;
          }
        }
      }
    });
  }
  if (grad_x != nullptr) {
    const int64_t* tp = csr_t.indptr.data<int64_t>();
    const I* tidx = csr_t.indices.data<I>();
    const int64_t* perm = edge_perm.data<int64_t>();
    float* out = grad_x->data<float>();
    ctx.pool->ParallelFor(num_src, DstGrain(num_src, num_edges, hd), [&](int64_t u0, int64_t u1) {
      for (int64_t u = u0; u < u1; ++u) {
        float* __restrict o = out + u * hd;
        std::fill(o, o + hd, 0.0f);
        for (int64_t k = tp[u]; k < tp[u + 1]; ++k) {
          const float* __restrict g = pg + static_cast<int64_t>(tidx[k]) * hd;
          const float* a = pa + perm[k] * h;
          for (int64_t j = 0; j < h; ++j) {
            const float aj = a[j];
            for (int64_t q = 0; q < d; ++q) o[j * d + q] += aj * g[j * d + q];
          }
        }
      }
    });
  }
}

}  // namespace

Status GatEdgeScores(const ExecContext& ctx, const Csr& csr, const Tensor& el, const Tensor& er,
                     float slope, Tensor* scores) {
  WithIndexType(csr.indices.dtype(), [&](auto tag) { Scores<decltype(tag)>(ctx, csr, el, er, slope, scores); });
  return Status::OK();
}

Status GatEdgeScoresBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t,
                             const Tensor& edge_perm, const Tensor& el, const Tensor& er, float slope,
                             const Tensor& grad_scores, Tensor* grad_el, Tensor* grad_er) {
  WithIndexType(csr.indices.dtype(), [&](auto tag) {
    ScoresBackward<decltype(tag)>(ctx, csr, csr_t, edge_perm, el, er, slope, grad_scores, grad_el, grad_er);
  });
  return Status::OK();
}

Status EdgeSoftmax(const ExecContext& ctx, const Csr& csr, const Tensor& scores, Tensor* out) {
  Softmax(ctx, csr, scores, out);
  return Status::OK();
}

Status EdgeSoftmaxBackward(const ExecContext& ctx, const Csr& csr, const Tensor& out,
                           const Tensor& grad_out, Tensor* grad_scores) {
  SoftmaxBackward(ctx, csr, out, grad_out, grad_scores);
  return Status::OK();
}

Status SpmmEdgeHeads(const ExecContext& ctx, const Csr& csr, const Tensor& alpha, const Tensor& x,
                     Tensor* out) {
  WithIndexType(csr.indices.dtype(), [&](auto tag) { Aggregate<decltype(tag)>(ctx, csr, alpha, x, out); });
  return Status::OK();
}

Status SpmmEdgeHeadsBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t,
                             const Tensor& edge_perm, const Tensor& alpha, const Tensor& x,
                             const Tensor& grad_out, Tensor* grad_alpha, Tensor* grad_x) {
  WithIndexType(csr.indices.dtype(), [&](auto tag) {
    AggregateBackward<decltype(tag)>(ctx, csr, csr_t, edge_perm, alpha, x, grad_out, grad_alpha, grad_x);
  });
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
