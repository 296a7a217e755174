// Dense optimizer updates on CUDA: one grid-stride launch per parameter on
// the context's stream. Adam's explicit fmaf, IEEE division and square root
// (the build's -prec-div / -prec-sqrt) give the CPU loop's bits. SGD is
// written without fused multiply-adds (--fmad=false); the CPU compiler may
// contract its loop, so the two agree to an ulp of the update.
#include "cuda_ops.h"
#include "cuda_util.cuh"

namespace foresight::kernels::cuda {

namespace {

__global__ void AdamKernel(float* w, const float* g, float* m, float* v, int64_t n, AdamUpdateArgs a) {
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float gj = fmaf(a.coupled_wd, w[j], g[j]);
    const float mj = fmaf(a.beta1, m[j], __fmul_rn(1.0f - a.beta1, gj));
    const float vj = fmaf(a.beta2, v[j], __fmul_rn(__fmul_rn(1.0f - a.beta2, gj), gj));
    const float den = __fadd_rn(__fdiv_rn(__fsqrt_rn(vj), a.bc2_sqrt), a.eps);
    m[j] = mj;
    v[j] = vj;
    w[j] = fmaf(w[j], a.shrink, -__fdiv_rn(__fmul_rn(a.step_size, mj), den));
  }
}

__global__ void SgdKernel(float* w, const float* g, float* buf, int64_t n, float lr, float wd, float mu) {
  for (int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float gj = __fadd_rn(g[j], __fmul_rn(wd, w[j]));
    if (buf != nullptr) {
      const float b = __fadd_rn(__fmul_rn(mu, buf[j]), gj);
      buf[j] = b;
      w[j] = __fsub_rn(w[j], __fmul_rn(lr, b));
    } else {
      w[j] = __fsub_rn(w[j], __fmul_rn(lr, gj));
    }
  }
}

unsigned GridFor(int64_t n) { return std::min<unsigned>(Blocks(n, kThreads), 65535u * 16u); }

}  // namespace

Status AdamUpdate(const ExecContext& ctx, const AdamUpdateArgs& args, const std::vector<DenseUpdateTensors>& params) {
  for (const DenseUpdateTensors& p : params) {
    const int64_t n = p.w.numel();
    if (n == 0) continue;
    FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, p.w.device()));
    AdamKernel<<<GridFor(n), kThreads, 0, s>>>(p.w.data<float>(), p.g.data<float>(), p.s0.data<float>(),
                                                p.s1.data<float>(), n, args);
    FS_RETURN_IF_ERROR(LaunchCheck("AdamKernel"));
  }
  return Status::OK();
}

Status SgdUpdate(const ExecContext& ctx, float lr, float weight_decay, float momentum,
                 const std::vector<DenseUpdateTensors>& params) {
  for (const DenseUpdateTensors& p : params) {
    const int64_t n = p.w.numel();
    if (n == 0) continue;
    FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, p.w.device()));
    float* buf = momentum > 0.0f ? p.s0.data<float>() : nullptr;
    SgdKernel<<<GridFor(n), kThreads, 0, s>>>(p.w.data<float>(), p.g.data<float>(), buf, n, lr, weight_decay,
                                               momentum);
    FS_RETURN_IF_ERROR(LaunchCheck("SgdKernel"));
  }
  return Status::OK();
}

}  // namespace foresight::kernels::cuda
