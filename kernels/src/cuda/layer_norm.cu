// LayerNorm fused with bias and residual on CUDA: one warp per row (the
// row's sums by warp reductions). The backward's gamma / beta column sums
// follow the CPU's order: per chunk of kColumnSumRows rows a sequential sum
// per column, then the chunks added in order, without atomics.
#include <cuda_runtime.h>

#include <cmath>

#include "transformer_ops.h"
#include "transformer_util.cuh"

namespace foresight::kernels::cuda {

using transformer::Blocks;
using transformer::CudaCheck;
using transformer::kWarp;
using transformer::LaunchCheck;
using transformer::WarpSum;

namespace {

constexpr int kRowsPerBlock = 8;
constexpr int64_t kColumnSumRows = 64;  // the CPU's chunk (cpu/layer_norm.cc)
constexpr int kThreads = 256;

__global__ void ForwardKernel(int64_t rows, int64_t cols, const float* x, const float* bias, const float* residual,
                              const float* gamma, const float* beta, float eps, float* sum, float* out, float* mean,
                              float* rstd) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (r >= rows) return;
  const int lane = threadIdx.x;
  auto h_at = [&](int64_t j) {
    float v = x[r * cols + j];
    if (bias != nullptr) v += bias[j];
    if (residual != nullptr) v += residual[r * cols + j];
    return v;
  };
  float s = 0.0f;
  for (int64_t j = lane; j < cols; j += kWarp) {
    const float v = h_at(j);
    if (sum != nullptr) sum[r * cols + j] = v;  // sum may be x: element j is read first
    s += v;
  }
  // Re-read h from `sum` when it was written (x may have been overwritten).
  auto h2 = [&](int64_t j) { return sum != nullptr ? sum[r * cols + j] : h_at(j); };
  const float inv_n = 1.0f / static_cast<float>(cols);
  const float mu = WarpSum(s) * inv_n;
  float var = 0.0f;
  for (int64_t j = lane; j < cols; j += kWarp) {
    const float d = h2(j) - mu;
    var += d * d;
  }
  const float rs = 1.0f / sqrtf(WarpSum(var) * inv_n + eps);
  for (int64_t j = lane; j < cols; j += kWarp) out[r * cols + j] = (h2(j) - mu) * rs * gamma[j] + beta[j];
  if (lane == 0) {
    mean[r] = mu;
    rstd[r] = rs;
  }
}

__global__ void BackwardRowsKernel(int64_t rows, int64_t cols, const float* h, const float* gamma, const float* mean,
                                   const float* rstd, const float* grad_out, float* grad_h) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (r >= rows) return;
  const int lane = threadIdx.x;
  const float mu = mean[r], rs = rstd[r];
  float sg = 0.0f, sgx = 0.0f;
  for (int64_t j = lane; j < cols; j += kWarp) {
    const float xhat = (h[r * cols + j] - mu) * rs;
    const float g = grad_out[r * cols + j] * gamma[j];
    sg += g;
    sgx += g * xhat;
  }
  const float inv_n = 1.0f / static_cast<float>(cols);
  const float mg = WarpSum(sg) * inv_n, mgx = WarpSum(sgx) * inv_n;
  for (int64_t j = lane; j < cols; j += kWarp) {
    const float xhat = (h[r * cols + j] - mu) * rs;
    grad_h[r * cols + j] = rs * (grad_out[r * cols + j] * gamma[j] - mg - xhat * mgx);
  }
}

// partial[c, 0, j] / partial[c, 1, j]: gamma's and beta's sums over the rows
// of chunk c, in row order. One thread per (chunk, column).
__global__ void ColumnPartialKernel(int64_t rows, int64_t cols, int64_t chunks, const float* h, const float* mean,
                                    const float* rstd, const float* grad_out, float* partial) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= chunks * cols) return;
  const int64_t c = idx / cols, j = idx % cols;
  const int64_t r1 = min(rows, (c + 1) * kColumnSumRows);
  float pg = 0.0f, pb = 0.0f;
  for (int64_t r = c * kColumnSumRows; r < r1; ++r) {
    const float xhat = (h[r * cols + j] - mean[r]) * rstd[r];
    pg += grad_out[r * cols + j] * xhat;
    pb += grad_out[r * cols + j];
  }
  partial[c * 2 * cols + j] = pg;
  partial[c * 2 * cols + cols + j] = pb;
}

__global__ void ColumnCombineKernel(int64_t cols, int64_t chunks, const float* partial, float* grad_gamma,
                                    float* grad_beta) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  float a = 0.0f, b = 0.0f;
  for (int64_t c = 0; c < chunks; ++c) {
    a += partial[c * 2 * cols + j];
    b += partial[c * 2 * cols + cols + j];
  }
  grad_gamma[j] = a;
  grad_beta[j] = b;
}

const float* OrNull(const Tensor& t) { return t.defined() ? t.data<float>() : nullptr; }

}  // namespace

Status LayerNorm(const ExecContext& ctx, const Tensor& x, const Tensor& bias, const Tensor& residual,
                 const Tensor& gamma, const Tensor& beta, float eps, Tensor* sum, Tensor* out, Tensor* mean,
                 Tensor* rstd) {
  const int64_t rows = x.size(0), cols = x.size(1);
  if (rows == 0) return Status::OK();
  FS_RETURN_IF_ERROR(CudaCheck("cudaSetDevice", cudaSetDevice(x.device().index)));
  ForwardKernel<<<Blocks(rows, kRowsPerBlock), dim3(kWarp, kRowsPerBlock)>>>(
      rows, cols, x.data<float>(), OrNull(bias), OrNull(residual), gamma.data<float>(), beta.data<float>(), eps,
      sum != nullptr ? sum->data<float>() : nullptr, out->data<float>(), mean->data<float>(), rstd->data<float>());
  return LaunchCheck("LayerNorm forward kernel");
}

Status LayerNormBackward(const ExecContext& ctx, const Tensor& h, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, const Tensor& grad_out, Tensor* grad_h, Tensor* grad_gamma,
                         Tensor* grad_beta) {
  const int64_t rows = h.size(0), cols = h.size(1);
  FS_RETURN_IF_ERROR(CudaCheck("cudaSetDevice", cudaSetDevice(h.device().index)));
  if (rows == 0) {
    FS_RETURN_IF_ERROR(CudaCheck("cudaMemsetAsync", cudaMemsetAsync(grad_gamma->data<float>(), 0, cols * 4)));
    return CudaCheck("cudaMemsetAsync", cudaMemsetAsync(grad_beta->data<float>(), 0, cols * 4));
  }
  BackwardRowsKernel<<<Blocks(rows, kRowsPerBlock), dim3(kWarp, kRowsPerBlock)>>>(
      rows, cols, h.data<float>(), gamma.data<float>(), mean.data<float>(), rstd.data<float>(),
      grad_out.data<float>(), grad_h->data<float>());
  FS_RETURN_IF_ERROR(LaunchCheck("LayerNormBackward rows kernel"));
  const int64_t chunks = (rows + kColumnSumRows - 1) / kColumnSumRows;
  FS_ASSIGN_OR_RETURN(Tensor partial, Tensor::EmptyOn(h.device(), {chunks * 2 * cols}, DType::kF32));
  ColumnPartialKernel<<<Blocks(chunks * cols, kThreads), kThreads>>>(rows, cols, chunks, h.data<float>(),
                                                                      mean.data<float>(), rstd.data<float>(),
                                                                      grad_out.data<float>(), partial.data<float>());
  FS_RETURN_IF_ERROR(LaunchCheck("LayerNormBackward column partial kernel"));
  ColumnCombineKernel<<<Blocks(cols, kThreads), kThreads>>>(cols, chunks, partial.data<float>(),
                                                             grad_gamma->data<float>(), grad_beta->data<float>());
  FS_RETURN_IF_ERROR(LaunchCheck("LayerNormBackward column combine kernel"));
  // `partial` goes back to the device cache on return: wait for its readers.
  return CudaCheck("cudaStreamSynchronize", cudaStreamSynchronize(0));
}

}  // namespace foresight::kernels::cuda
