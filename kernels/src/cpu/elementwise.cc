// Elementwise ops: flat loops in chunks of kElementGrain elements. Outputs may
// alias inputs (each element is read before it is written, by one thread).
#include <algorithm>
#include <vector>

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

namespace {

template <typename Fn>
void ForEachChunk(const ExecContext& ctx, int64_t n, Fn fn) {
  ctx.pool->ParallelFor(n, kElementGrain, [&](int64_t b, int64_t e) { fn(b, e); });
}

}  // namespace

Status Add(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* out) {
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* po = out->data<float>();
  ForEachChunk(ctx, a.numel(), [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) po[i] = pa[i] + pb[i];
  });
  return Status::OK();
}

Status Axpby(const ExecContext& ctx, float alpha, const Tensor& a, float beta, const Tensor& b, Tensor* out) {
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* po = out->data<float>();
  ForEachChunk(ctx, a.numel(), [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) po[i] = pa[i] * alpha + pb[i] * beta;
  });
  return Status::OK();
}

Status Mul(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* out) {
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* po = out->data<float>();
  ForEachChunk(ctx, a.numel(), [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) po[i] = pa[i] * pb[i];
  });
  return Status::OK();
}

Status Scale(const ExecContext& ctx, const Tensor& a, float alpha, Tensor* out) {
  const float* pa = a.data<float>();
  float* po = out->data<float>();
  ForEachChunk(ctx, a.numel(), [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) po[i] = pa[i] * alpha;
  });
  return Status::OK();
}

Status AddBias(const ExecContext& ctx, const Tensor& x, const Tensor& bias, Tensor* out) {
  const int64_t n = x.size(0), f = x.size(1);
  const float* px = x.data<float>();
  const float* pb = bias.data<float>();
  float* po = out->data<float>();
  ctx.pool->ParallelFor(n, RowGrain(f), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = px + r * f;
      float* orow = po + r * f;
      for (int64_t j = 0; j < f; ++j) orow[j] = xr[j] + pb[j];
    }
  });
  return Status::OK();
}

// Rows are summed in fixed chunks of RowGrain(f) rows; chunk partials are then
// added in chunk order, so the result does not depend on the thread count.
Status SumRows(const ExecContext& ctx, const Tensor& grad, Tensor* grad_bias) {
  const int64_t n = grad.size(0), f = grad.size(1);
  const float* pg = grad.data<float>();
  float* out = grad_bias->data<float>();
  std::fill(out, out + f, 0.0f);
  if (n == 0 || f == 0) return Status::OK();
  const int64_t grain = RowGrain(f);
  const int64_t chunks = ThreadPool::NumChunks(n, grain);
  std::vector<float> partial(static_cast<size_t>(chunks * f), 0.0f);
  ctx.pool->ParallelForChunks(n, grain, [&](int64_t c, int64_t r0, int64_t r1) {
    float* acc = partial.data() + c * f;
    for (int64_t r = r0; r < r1; ++r) {
      const float* row = pg + r * f;
      for (int64_t j = 0; j < f; ++j) acc[j] += row[j];
    }
  });
  for (int64_t c = 0; c < chunks; ++c) {
    const float* acc = partial.data() + c * f;
    for (int64_t j = 0; j < f; ++j) out[j] += acc[j];
  }
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
