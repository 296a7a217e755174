// Dropout on CUDA with the CPU's counter-based draws: element i keeps when
// the word (i & 3) of RngKey::Bits(i / 4, 0) (core/rng.h, shared host and
// device code), shifted to 24 bits and scaled by 2^-24, is >= p. One
// thread per group of four elements makes one Philox call, as the CPU's
// loop does, so masks and outputs are the CPU's bits.
#include <cmath>

#include "cuda_ops.h"
#include "cuda_util.cuh"
#include "foresight/core/rng.h"

namespace foresight::kernels::cuda {

namespace {

__global__ void DropoutKernel(RngKey rng, float p, float scale, const float* x, float* out, uint8_t* mask,
                              int64_t n) {
  const int64_t groups = (n + 3) / 4;
  for (int64_t q = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; q < groups;
       q += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const Uint4 b = rng.Bits(static_cast<uint64_t>(q), 0);
    const uint32_t words[4] = {b.x, b.y, b.z, b.w};
    const int64_t g = q * 4;
    const int64_t m = n - g < 4 ? n - g : 4;
    for (int64_t k = 0; k < m; ++k) {
      const bool keep = __fmul_rn(static_cast<float>(words[k] >> 8), 1.0f / 16777216.0f) >= p;
      out[g + k] = keep ? __fmul_rn(x[g + k], scale) : 0.0f;
      if (mask != nullptr) mask[g + k] = keep ? 1 : 0;
    }
  }
}

__global__ void DropoutBackwardKernel(float scale, const uint8_t* mask, const float* g, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = __fmul_rn(g[i], scale);
    out[i] = mask[i] != 0 ? v : 0.0f;
  }
}

}  // namespace

Status Dropout(const ExecContext& ctx, float p, const Tensor& x, Tensor* out, Tensor* mask) {
  const int64_t n = x.numel();
  if (n == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, x.device()));
  const float scale = 1.0f / (1.0f - p);  // on the host, as the CPU computes it
  const unsigned grid = std::min<unsigned>(Blocks((n + 3) / 4, kThreads), 65535u * 16u);
  DropoutKernel<<<grid, kThreads, 0, s>>>(ctx.rng, p, scale, x.data<float>(), out->data<float>(),
                                          mask != nullptr ? mask->data<uint8_t>() : nullptr, n);
  return LaunchCheck("DropoutKernel");
}

Status DropoutBackward(const ExecContext& ctx, float p, const Tensor& mask, const Tensor& grad_out,
                       Tensor* grad_x) {
  const int64_t n = grad_out.numel();
  if (n == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, grad_out.device()));
  const float scale = 1.0f / (1.0f - p);
  const unsigned grid = std::min<unsigned>(Blocks(n, kThreads), 65535u * 16u);
  DropoutBackwardKernel<<<grid, kThreads, 0, s>>>(scale, mask.data<uint8_t>(), grad_out.data<float>(),
                                                  grad_x->data<float>(), n);
  return LaunchCheck("DropoutBackwardKernel");
}

}  // namespace foresight::kernels::cuda
