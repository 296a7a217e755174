// Activations: relu, elu (param = alpha), leaky relu (param = negative slope).
#include <cmath>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "bias_rows.h"
#include "cpu_ops.h"
#include "row_sums.h"

namespace foresight::kernels::cpu {

Status Activate(const ExecContext& ctx, Activation act, float param, const Tensor& x, Tensor* out) {
  const float* px = x.data<float>();
  float* po = out->data<float>();
  ctx.pool->ParallelFor(x.numel(), kElementGrain, [&](int64_t s, int64_t e) {
    switch (act) {
      case Activation::kRelu:
        ReluSelect(px, px, po, s, e);
        break;
      case Activation::kLeakyRelu:
        for (int64_t i = s; i < e; ++i) po[i] = px[i] > 0.0f ? px[i] : px[i] * param;
        break;
      case Activation::kElu:
        for (int64_t i = s; i < e; ++i) po[i] = px[i] > 0.0f ? px[i] : param * std::expm1(px[i]);
        break;
    }
  });
  return Status::OK();
}

Status ActivateBackward(const ExecContext& ctx, Activation act, float param, const Tensor& x,
                        const Tensor& grad_out, Tensor* grad_x) {
  const float* px = x.data<float>();
  const float* pg = grad_out.data<float>();
  float* po = grad_x->data<float>();
  ctx.pool->ParallelFor(x.numel(), kElementGrain, [&](int64_t s, int64_t e) {
    switch (act) {
      case Activation::kRelu:
        ReluSelect(px, pg, po, s, e);
        break;
      case Activation::kLeakyRelu:
        for (int64_t i = s; i < e; ++i) po[i] = px[i] > 0.0f ? pg[i] : pg[i] * param;
        break;
      case Activation::kElu:
        for (int64_t i = s; i < e; ++i) po[i] = px[i] > 0.0f ? pg[i] : pg[i] * param * std::exp(px[i]);
        break;
    }
  });
  return Status::OK();
}

Status AddBiasRelu(const ExecContext& ctx, const Tensor& x, const Tensor& bias, Tensor* out) {
  const int64_t n = x.size(0), f = x.size(1);
  const float* px = x.data<float>();
  const float* pb = bias.data<float>();
  float* po = out->data<float>();
  ctx.pool->ParallelFor(n, RowGrain(f), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) BiasReluRow(px + r * f, pb, po + r * f, f);
  });
  return Status::OK();
}

// grad_z is written and summed row by row in SumRows' chunks (RowGrain(f)
// rows, each chunk's partial from 0.0f, the partials added in chunk order),
// so the bias gradient is SumRows' bits without a second pass over grad_z.
Status ReluBackwardSumRows(const ExecContext& ctx, const Tensor& y, const Tensor& grad_y, Tensor* grad_z,
                           Tensor* grad_bias) {
  const int64_t n = y.size(0), f = y.size(1);
  const float* py = y.data<float>();
  const float* pg = grad_y.data<float>();
  float* pz = grad_z->data<float>();
  if (grad_bias == nullptr) {
    ctx.pool->ParallelFor(n * f, kElementGrain, [&](int64_t s, int64_t e) { ReluSelect(py, pg, pz, s, e); });
    return Status::OK();
  }
  SumRowsInChunks(ctx, n, f, grad_bias->data<float>(), [&](int64_t r) {
    float* row = pz + r * f;
    ReluSelect(py + r * f, pg + r * f, row, 0, f);
    return row;
  });
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
