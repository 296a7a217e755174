// DLRM's feature interaction on the CPU, one sample per loop iteration (the
// samples are independent, so any chunking gives the same bits).
#include <cstring>

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

namespace {

// Row k of sample b's stacked vectors: z_0 = x[b], z_k = table k-1 of emb[b].
inline const float* Z(const float* xb, const float* eb, int64_t dim, int64_t k) {
  return k == 0 ? xb : eb + (k - 1) * dim;
}

inline float Dot(const float* a, const float* b, int64_t n) {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

Status FeatureInteraction(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                          const Tensor& emb, Tensor* out) {
  const int64_t batch = x.size(0), d = x.size(1), ew = emb.size(1), e = ew / num_tables;
  const int64_t width = out->size(1);
  const float* px = x.data<float>();
  const float* pe = emb.data<float>();
  float* po = out->data<float>();
  ctx.pool->ParallelFor(batch, RowGrain(width + ew), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float* xb = px + b * d;
      const float* eb = pe + b * ew;
      float* ob = po + b * width;
      std::memcpy(ob, xb, static_cast<size_t>(d) * sizeof(float));
      if (kind == Interaction::kCat) {
        std::memcpy(ob + d, eb, static_cast<size_t>(ew) * sizeof(float));
        continue;
      }
      float* pairs = ob + d;
      for (int64_t i = 1; i <= num_tables; ++i) {
        const float* zi = Z(xb, eb, e, i);
        for (int64_t j = 0; j < i; ++j) *pairs++ = Dot(zi, Z(xb, eb, e, j), e);
      }
    }
  });
  return Status::OK();
}

Status FeatureInteractionBackward(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                                  const Tensor& emb, const Tensor& grad_out, Tensor* grad_x, Tensor* grad_emb) {
  const int64_t batch = x.size(0), d = x.size(1), ew = emb.size(1), e = ew / num_tables;
  const int64_t width = grad_out.size(1);
  const float* px = x.data<float>();
  const float* pe = emb.data<float>();
  const float* pg = grad_out.data<float>();
  float* pgx = grad_x->data<float>();
  float* pge = grad_emb->data<float>();
  ctx.pool->ParallelFor(batch, RowGrain(width + ew), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float* xb = px + b * d;
      const float* eb = pe + b * ew;
      const float* gb = pg + b * width;
      float* gxb = pgx + b * d;
      float* geb = pge + b * ew;
      std::memcpy(gxb, gb, static_cast<size_t>(d) * sizeof(float));
      if (kind == Interaction::kCat) {
        std::memcpy(geb, gb + d, static_cast<size_t>(ew) * sizeof(float));
        continue;
      }
      std::memset(geb, 0, static_cast<size_t>(ew) * sizeof(float));
      const float* gp = gb + d;  // pair (i, j), i > j, at i(i-1)/2 + j
      for (int64_t k = 0; k <= num_tables; ++k) {
        float* gk = k == 0 ? gxb : geb + (k - 1) * e;
        // d out(i,j) / d z_k: z_j when k = i, z_i when k = j; j ascending.
        for (int64_t j = 0; j <= num_tables; ++j) {
          if (j == k) continue;
          const float g = k > j ? gp[k * (k - 1) / 2 + j] : gp[j * (j - 1) / 2 + k];
          const float* zj = Z(xb, eb, e, j);
          for (int64_t c = 0; c < e; ++c) gk[c] += g * zj[c];
        }
      }
    }
  });
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
