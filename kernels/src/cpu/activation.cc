// Activations: relu, elu (param = alpha), leaky relu (param = negative slope).
#include <cmath>

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

Status Activate(const ExecContext& ctx, Activation act, float param, const Tensor& x, Tensor* out) {
  const float* px = x.data<float>();
  float* po = out->data<float>();
  ctx.pool->ParallelFor(x.numel(), kElementGrain, [&](int64_t s, int64_t e) {
    switch (act) {
      case Activation::kRelu:
        for (int64_t i = s; i < e; ++i) po[i] = px[i] > 0.0f ? px[i] : 0.0f;
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
        for (int64_t i = s; i < e; ++i) po[i] = px[i] > 0.0f ? pg[i] : 0.0f;
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

}  // namespace foresight::kernels::cpu
