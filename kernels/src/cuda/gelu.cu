// GELU (erf and tanh forms, fused bias) on CUDA, one thread per element,
// with the device's erff / expf (within an ulp or two of the CPU's
// fast_math.h; tested with a tolerance).
#include <cuda_runtime.h>

#include "transformer_ops.h"
#include "transformer_util.cuh"

namespace foresight::kernels::cuda {

using transformer::Blocks;
using transformer::CudaCheck;
using transformer::LaunchCheck;

namespace {

constexpr int kThreads = 256;
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;
constexpr float kTanhC = 0.79788456080286536f;
constexpr float kTanhA = 0.044715f;

__global__ void GeluKernel(bool erf_form, int64_t n, int64_t cols, const float* x, const float* bias, float* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float u = bias != nullptr ? x[i] + bias[i % cols] : x[i];
  if (erf_form) {
    out[i] = 0.5f * u * (1.0f + erff(u * kInvSqrt2));
  } else {
    const float z = kTanhC * (u + kTanhA * u * u * u);
    out[i] = u / (1.0f + expf(-2.0f * z));
  }
}

// grad may be grad_x (element i is read before it is written).
__global__ void GeluBackwardKernel(bool erf_form, int64_t n, int64_t cols, const float* x, const float* bias,
                                   const float* grad, float* grad_x) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float u = bias != nullptr ? x[i] + bias[i % cols] : x[i];
  float d;
  if (erf_form) {
    d = 0.5f * (1.0f + erff(u * kInvSqrt2)) + u * kInvSqrt2Pi * expf(-0.5f * u * u);
  } else {
    const float z = kTanhC * (u + kTanhA * u * u * u);
    const float s = 1.0f / (1.0f + expf(-2.0f * z));
    d = s + 2.0f * u * s * (1.0f - s) * kTanhC * (1.0f + 3.0f * kTanhA * u * u);
  }
  grad_x[i] = grad[i] * d;
}

}  // namespace

Status Gelu(const ExecContext& ctx, GeluForm form, const Tensor& x, const Tensor& bias, Tensor* out) {
  const int64_t n = x.numel();
  if (n == 0) return Status::OK();
  FS_RETURN_IF_ERROR(CudaCheck("cudaSetDevice", cudaSetDevice(x.device().index)));
  GeluKernel<<<Blocks(n, kThreads), kThreads>>>(form == GeluForm::kErf, n, x.size(1), x.data<float>(),
                                                bias.defined() ? bias.data<float>() : nullptr, out->data<float>());
  return LaunchCheck("Gelu kernel");
}

Status GeluBackward(const ExecContext& ctx, GeluForm form, const Tensor& x, const Tensor& bias,
                    const Tensor& grad_out, Tensor* grad_x) {
  const int64_t n = x.numel();
  if (n == 0) return Status::OK();
  FS_RETURN_IF_ERROR(CudaCheck("cudaSetDevice", cudaSetDevice(x.device().index)));
  GeluBackwardKernel<<<Blocks(n, kThreads), kThreads>>>(form == GeluForm::kErf, n, x.size(1), x.data<float>(),
                                                        bias.defined() ? bias.data<float>() : nullptr,
                                                        grad_out.data<float>(), grad_x->data<float>());
  return LaunchCheck("GeluBackward kernel");
}

}  // namespace foresight::kernels::cuda
