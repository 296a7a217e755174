// Elementwise ops: flat loops in chunks of kElementGrain elements. Outputs may
// alias inputs (each element is read before it is written, by one thread).
#include <algorithm>
#include <vector>

#include "bias_rows.h"
#include "cpu_ops.h"
#include "row_sums.h"

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
    for (int64_t r = r0; r < r1; ++r) BiasRow(px + r * f, pb, po + r * f, f);
  });
  return Status::OK();
}

// Rows summed in a thread-count-independent order (row_sums.h).
Status SumRows(const ExecContext& ctx, const Tensor& grad, Tensor* grad_bias) {
  const int64_t n = grad.size(0), f = grad.size(1);
  const float* pg = grad.data<float>();
  SumRowsInChunks(ctx, n, f, grad_bias->data<float>(), [&](int64_t r) { return pg + r * f; });
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
