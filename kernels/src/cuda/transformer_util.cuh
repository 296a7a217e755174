// Helpers of the transformer ops' CUDA kernels (attention.cu, layer_norm.cu,
// gelu.cu): Status from CUDA errors, warp sums, launch sizes.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "foresight/core/status.h"

namespace foresight::kernels::cuda::transformer {

constexpr int kWarp = 32;

inline Status CudaCheck(const char* what, cudaError_t err) {
  if (err == cudaSuccess) return Status::OK();
  return Internal(std::string(what) + " failed: " + cudaGetErrorString(err));
}
inline Status LaunchCheck(const char* kernel) { return CudaCheck(kernel, cudaGetLastError()); }

// The sum of v over the warp, in every lane (xor butterfly: a fixed order,
// so the same inputs give the same bits on every run).
__device__ inline float WarpSum(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

inline unsigned Blocks(int64_t n, int64_t per) {
  return static_cast<unsigned>(std::max<int64_t>(1, (n + per - 1) / per));
}

// Grid dimensions y and z are limited to 65535; kernels stride over the rest.
inline unsigned GridYZ(int64_t n) { return static_cast<unsigned>(std::clamp<int64_t>(n, 1, 65535)); }

}  // namespace foresight::kernels::cuda::transformer
