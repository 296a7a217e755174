// Elementwise ops on CUDA: one thread per element (grid-stride), each
// element computed with the CPU's operations in the CPU's order. SumRows
// reproduces the CPU's fixed chunking (RowGrain(f) rows per partial, the
// partials added in chunk order), so its sums are the CPU's bits.
#include "cuda_ops.h"
#include "cuda_util.cuh"

namespace foresight::kernels::cuda {

namespace {

// The CPU's rows per chunk (cpu_ops.h: RowGrain with kElementGrain 16384).
inline int64_t CpuRowGrain(int64_t f) {
  const int64_t g = 16384 / (f > 0 ? f : 1);
  return g > 0 ? g : 1;
}

template <typename Fn>
__global__ void MapKernel(int64_t n, Fn fn) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    fn(i);
  }
}

template <typename Fn>
Status Map(const ExecContext& ctx, Device device, int64_t n, const char* name, Fn fn) {
  if (n == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, device));
  const unsigned grid = std::min<unsigned>(Blocks(n, kThreads), 65535u * 16u);
  MapKernel<<<grid, kThreads, 0, s>>>(n, fn);
  return LaunchCheck(name);
}

// partial[c, j] = sum of rows [c*grain, min(n, (c+1)*grain)) of column j,
// from 0 in row order.
__global__ void ChunkSumKernel(const float* g, int64_t n, int64_t f, int64_t grain, int64_t chunks, float* partial) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= chunks * f) return;
  const int64_t c = t / f, j = t % f;
  const int64_t r1 = min(n, (c + 1) * grain);
  float acc = 0.0f;
  for (int64_t r = c * grain; r < r1; ++r) acc = __fadd_rn(acc, g[r * f + j]);
  partial[t] = acc;
}

__global__ void CombineKernel(const float* partial, int64_t chunks, int64_t f, float* out) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= f) return;
  float acc = 0.0f;
  for (int64_t c = 0; c < chunks; ++c) acc = __fadd_rn(acc, partial[c * f + j]);
  out[j] = acc;
}

}  // namespace

Status Add(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* out) {
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* po = out->data<float>();
  return Map(ctx, a.device(), a.numel(), "AddKernel",
             [=] __device__(int64_t i) { po[i] = __fadd_rn(pa[i], pb[i]); });
}

Status Axpby(const ExecContext& ctx, float alpha, const Tensor& a, float beta, const Tensor& b, Tensor* out) {
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* po = out->data<float>();
  return Map(ctx, a.device(), a.numel(), "AxpbyKernel", [=] __device__(int64_t i) {
    po[i] = __fadd_rn(__fmul_rn(pa[i], alpha), __fmul_rn(pb[i], beta));
  });
}

Status Mul(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* out) {
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  float* po = out->data<float>();
  return Map(ctx, a.device(), a.numel(), "MulKernel",
             [=] __device__(int64_t i) { po[i] = __fmul_rn(pa[i], pb[i]); });
}

Status Scale(const ExecContext& ctx, const Tensor& a, float alpha, Tensor* out) {
  const float* pa = a.data<float>();
  float* po = out->data<float>();
  return Map(ctx, a.device(), a.numel(), "ScaleKernel",
             [=] __device__(int64_t i) { po[i] = __fmul_rn(pa[i], alpha); });
}

Status AddBias(const ExecContext& ctx, const Tensor& x, const Tensor& bias, Tensor* out) {
  const int64_t f = x.size(1);
  const float* px = x.data<float>();
  const float* pb = bias.data<float>();
  float* po = out->data<float>();
  return Map(ctx, x.device(), x.numel(), "AddBiasKernel",
             [=] __device__(int64_t i) { po[i] = __fadd_rn(px[i], pb[i % f]); });
}

Status SumRows(const ExecContext& ctx, const Tensor& grad, Tensor* grad_bias) {
  const int64_t n = grad.size(0), f = grad.size(1);
  const Device dev = grad.device();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, dev));
  if (f == 0) return Status::OK();
  if (n == 0) {
    return CudaCheck("cudaMemsetAsync", cudaMemsetAsync(grad_bias->raw_data(), 0, f * sizeof(float), s));
  }
  const int64_t grain = CpuRowGrain(f);
  const int64_t chunks = (n + grain - 1) / grain;
  FS_ASSIGN_OR_RETURN(Tensor partial, Scratch(dev, chunks * f, DType::kF32));
  ChunkSumKernel<<<Blocks(chunks * f, kThreads), kThreads, 0, s>>>(grad.data<float>(), n, f, grain, chunks,
                                                                  partial.data<float>());
  FS_RETURN_IF_ERROR(LaunchCheck("ChunkSumKernel"));
  CombineKernel<<<Blocks(f, kThreads), kThreads, 0, s>>>(partial.data<float>(), chunks, f,
                                                        grad_bias->data<float>());
  FS_RETURN_IF_ERROR(LaunchCheck("CombineKernel"));
  return Sync(s);
}

}  // namespace foresight::kernels::cuda
