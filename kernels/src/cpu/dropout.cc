// Inverted dropout. The keep decision of flat element i is
// ctx.rng.Uniform(i, 0) >= p: a pure function of the key and i.
#include "cpu_ops.h"

namespace foresight::kernels::cpu {

Status Dropout(const ExecContext& ctx, float p, const Tensor& x, Tensor* out, Tensor* mask) {
  const float* px = x.data<float>();
  float* po = out->data<float>();
  uint8_t* pm = mask != nullptr ? mask->data<uint8_t>() : nullptr;
  const float scale = 1.0f / (1.0f - p);
  const RngKey rng = ctx.rng;
  ctx.pool->ParallelFor(x.numel(), kElementGrain, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      const bool keep = rng.Uniform(static_cast<uint64_t>(i), 0) >= p;
      po[i] = keep ? px[i] * scale : 0.0f;
      if (pm != nullptr) pm[i] = keep ? 1 : 0;
    }
  });
  return Status::OK();
}

Status DropoutBackward(const ExecContext& ctx, float p, const Tensor& mask, const Tensor& grad_out,
                       Tensor* grad_x) {
  const uint8_t* pm = mask.data<uint8_t>();
  const float* pg = grad_out.data<float>();
  float* po = grad_x->data<float>();
  const float scale = 1.0f / (1.0f - p);
  ctx.pool->ParallelFor(grad_out.numel(), kElementGrain, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) po[i] = pm[i] != 0 ? pg[i] * scale : 0.0f;
  });
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
