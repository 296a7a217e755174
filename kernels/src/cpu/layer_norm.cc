// LayerNorm with the bias and residual add before it fused in: one pass
// forms h = x + bias + residual, the row's mean and variance, and the
// normalised output. The forward keeps only mean and rstd per row beside h
// (which the caller holds anyway: it is the residual stream).
#include <cmath>
#include <vector>

#include "cpu_ops.h"
#include "transformer_ops.h"

namespace foresight::kernels::cpu {

namespace {
// Rows per chunk of the backward's column sums: the partial sums of a chunk
// are added in chunk order, so grad_gamma / grad_beta do not depend on the
// thread count.
constexpr int64_t kColumnSumRows = 64;
}  // namespace

Status LayerNorm(const ExecContext& ctx, const Tensor& x, const Tensor& bias, const Tensor& residual,
                 const Tensor& gamma, const Tensor& beta, float eps, Tensor* sum, Tensor* out, Tensor* mean,
                 Tensor* rstd) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const float* px = x.data<float>();
  const float* pb = bias.defined() ? bias.data<float>() : nullptr;
  const float* pr = residual.defined() ? residual.data<float>() : nullptr;
  const float* pgam = gamma.data<float>();
  const float* pbet = beta.data<float>();
  float* ps = sum != nullptr ? sum->data<float>() : nullptr;
  float* po = out->data<float>();
  float* pm = mean->data<float>();
  float* prs = rstd->data<float>();
  const float inv_n = 1.0f / static_cast<float>(cols);
  ctx.pool->ParallelFor(rows, RowGrain(cols), [&](int64_t r0, int64_t r1) {
    std::vector<float> scratch(ps == nullptr ? cols : 0);
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = px + r * cols;
      // h goes to `sum`, or to scratch when the caller does not want it.
      float* h = ps != nullptr ? ps + r * cols : scratch.data();
      float s = 0.0f;
      for (int64_t j = 0; j < cols; ++j) {
        float v = xr[j];
        if (pb != nullptr) v += pb[j];
        if (pr != nullptr) v += pr[r * cols + j];
        h[j] = v;
        s += v;
      }
      const float mu = s * inv_n;
      float var = 0.0f;  // two passes over a row in cache: no cancellation
      for (int64_t j = 0; j < cols; ++j) {
        const float dlt = h[j] - mu;
        var += dlt * dlt;
      }
      const float rs = 1.0f / std::sqrt(var * inv_n + eps);
      float* o = po + r * cols;
      for (int64_t j = 0; j < cols; ++j) o[j] = (h[j] - mu) * rs * pgam[j] + pbet[j];
      pm[r] = mu;
      prs[r] = rs;
    }
  });
  return Status::OK();
}

Status LayerNormBackward(const ExecContext& ctx, const Tensor& h, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, const Tensor& grad_out, Tensor* grad_h, Tensor* grad_gamma,
                         Tensor* grad_beta) {
  const int64_t rows = h.size(0), cols = h.size(1);
  const float* ph = h.data<float>();
  const float* pgam = gamma.data<float>();
  const float* pm = mean.data<float>();
  const float* prs = rstd.data<float>();
  const float* pg = grad_out.data<float>();
  float* pgh = grad_h->data<float>();
  const int64_t chunks = ThreadPool::NumChunks(rows, kColumnSumRows);
  // Per chunk: gamma's partial sums, then beta's.
  std::vector<float> partial(static_cast<size_t>(chunks) * 2 * cols, 0.0f);
  const float inv_n = 1.0f / static_cast<float>(cols);
  ctx.pool->ParallelForChunks(rows, kColumnSumRows, [&](int64_t chunk, int64_t r0, int64_t r1) {
    float* pgam_part = partial.data() + chunk * 2 * cols;
    float* pbet_part = pgam_part + cols;
    for (int64_t r = r0; r < r1; ++r) {
      const float* hr = ph + r * cols;
      const float* gr = pg + r * cols;
      const float mu = pm[r], rs = prs[r];
      // With xhat = (h - mu) rs and g = grad_out * gamma:
      // grad_h = rs (g - mean(g) - xhat mean(g xhat)).
      float sg = 0.0f, sgx = 0.0f;
      for (int64_t j = 0; j < cols; ++j) {
        const float xhat = (hr[j] - mu) * rs;
        const float g = gr[j] * pgam[j];
        sg += g;
        sgx += g * xhat;
        pgam_part[j] += gr[j] * xhat;
        pbet_part[j] += gr[j];
      }
      const float mg = sg * inv_n, mgx = sgx * inv_n;
      float* o = pgh + r * cols;
      for (int64_t j = 0; j < cols; ++j) {
        const float xhat = (hr[j] - mu) * rs;
        o[j] = rs * (gr[j] * pgam[j] - mg - xhat * mgx);
      }
    }
  });
  float* gg = grad_gamma->data<float>();
  float* gb = grad_beta->data<float>();
  ctx.pool->ParallelFor(cols, RowGrain(chunks * 2), [&](int64_t c0, int64_t c1) {
    for (int64_t j = c0; j < c1; ++j) {
      float a = 0.0f, b = 0.0f;
      for (int64_t c = 0; c < chunks; ++c) {
        a += partial[c * 2 * cols + j];
        b += partial[c * 2 * cols + cols + j];
      }
      gg[j] = a;
      gb[j] = b;
    }
  });
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
