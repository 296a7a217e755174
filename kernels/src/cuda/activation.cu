// Activations on CUDA, element by element as the CPU computes them. ReLU
// and leaky ReLU are the CPU's bits; ELU's expm1 / exp come from CUDA's
// math library (within an ulp or two of glibc's).
#include "cuda_ops.h"
#include "cuda_util.cuh"

namespace foresight::kernels::cuda {

namespace {

__global__ void ActivateKernel(int act, float param, const float* x, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = x[i];
    float o;
    if (act == static_cast<int>(Activation::kRelu)) {
      o = v > 0.0f ? v : 0.0f;
    } else if (act == static_cast<int>(Activation::kLeakyRelu)) {
      o = v > 0.0f ? v : __fmul_rn(v, param);
    } else {
      o = v > 0.0f ? v : __fmul_rn(param, expm1f(v));
    }
    out[i] = o;
  }
}

__global__ void ActivateBackwardKernel(int act, float param, const float* x, const float* g, float* out,
                                       int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = x[i];
    float o;
    if (act == static_cast<int>(Activation::kRelu)) {
      o = v > 0.0f ? g[i] : 0.0f;
    } else if (act == static_cast<int>(Activation::kLeakyRelu)) {
      o = v > 0.0f ? g[i] : __fmul_rn(g[i], param);
    } else {
      o = v > 0.0f ? g[i] : __fmul_rn(__fmul_rn(g[i], param), expf(v));
    }
    out[i] = o;
  }
}

unsigned Grid(int64_t n) { return std::min<unsigned>(Blocks(n, kThreads), 65535u * 16u); }

}  // namespace

Status Activate(const ExecContext& ctx, Activation act, float param, const Tensor& x, Tensor* out) {
  const int64_t n = x.numel();
  if (n == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, x.device()));
  ActivateKernel<<<Grid(n), kThreads, 0, s>>>(static_cast<int>(act), param, x.data<float>(), out->data<float>(), n);
  return LaunchCheck("ActivateKernel");
}

Status ActivateBackward(const ExecContext& ctx, Activation act, float param, const Tensor& x,
                        const Tensor& grad_out, Tensor* grad_x) {
  const int64_t n = x.numel();
  if (n == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, x.device()));
  ActivateBackwardKernel<<<Grid(n), kThreads, 0, s>>>(static_cast<int>(act), param, x.data<float>(),
                                                      grad_out.data<float>(), grad_x->data<float>(), n);
  return LaunchCheck("ActivateBackwardKernel");
}

// The CPU fuses these into one pass each; here they run as the two kernels
// they fuse (AddBias then ReLU; ReLU's backward then SumRows), which are the
// CPU's bits (y > 0 exactly where the pre-activation is).
Status AddBiasRelu(const ExecContext& ctx, const Tensor& x, const Tensor& bias, Tensor* out) {
  FS_RETURN_IF_ERROR(cuda::AddBias(ctx, x, bias, out));
  return cuda::Activate(ctx, Activation::kRelu, 0.0f, *out, out);
}

Status ReluBackwardSumRows(const ExecContext& ctx, const Tensor& y, const Tensor& grad_y, Tensor* grad_z,
                           Tensor* grad_bias) {
  FS_RETURN_IF_ERROR(cuda::ActivateBackward(ctx, Activation::kRelu, 0.0f, y, grad_y, grad_z));
  if (grad_bias == nullptr) return Status::OK();
  return cuda::SumRows(ctx, *grad_z, grad_bias);
}

}  // namespace foresight::kernels::cuda
