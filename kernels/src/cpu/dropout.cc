// Inverted dropout. The keep decision of flat element i is
// ctx.rng.StreamUniform(i, 0) >= p: a pure function of the key and i. One
// Philox call serves four elements, which is what makes dropout cheap next
// to the GEMMs (a call per element cost more than the layer's matmul).
#include "cpu_ops.h"

namespace foresight::kernels::cpu {

static_assert(kElementGrain % 4 == 0, "dropout groups four elements per Philox call");

Status Dropout(const ExecContext& ctx, float p, const Tensor& x, Tensor* out, Tensor* mask) {
  const float* px = x.data<float>();
  float* po = out->data<float>();
  uint8_t* pm = mask != nullptr ? mask->data<uint8_t>() : nullptr;
  const float scale = 1.0f / (1.0f - p);
  const RngKey rng = ctx.rng;
  ctx.pool->ParallelFor(x.numel(), kElementGrain, [&](int64_t s, int64_t e) {
    // Chunks start at multiples of kElementGrain, a multiple of 4, so each
    // group of four elements shares one Philox call.
    for (int64_t g = s; g < e; g += 4) {
      const Uint4 b = rng.Bits(static_cast<uint64_t>(g) >> 2, 0);
      const uint32_t words[4] = {b.x, b.y, b.z, b.w};
      const int64_t n = e - g < 4 ? e - g : 4;
      for (int64_t k = 0; k < n; ++k) {
        const bool keep = static_cast<float>(words[k] >> 8) * (1.0f / 16777216.0f) >= p;
        po[g + k] = keep ? px[g + k] * scale : 0.0f;
        if (pm != nullptr) pm[g + k] = keep ? 1 : 0;
      }
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
