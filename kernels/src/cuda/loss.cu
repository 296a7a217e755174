// Log-softmax, NLL loss and accuracy on CUDA. Log-softmax: one warp per
// row (warp-tree max and sum; exp and log from CUDA's library, so within
// a few ulps of the CPU). NLL loss sums in double over the CPU's fixed
// chunks of 1024 rows, each chunk in row order, the chunks added on the
// host in order: the CPU's loss bits. Accuracy counts are integers.
#include <cmath>
#include <string>
#include <vector>

#include "cuda_ops.h"
#include "cuda_util.cuh"

namespace foresight::kernels::cuda {

namespace {

constexpr int64_t kLossRowGrain = 1024;  // the CPU's chunk of rows (cpu/loss.cc)
constexpr int kRowsPerBlock = kThreads / kWarpSize;

__device__ inline float WarpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ inline float WarpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__global__ void LogSoftmaxKernel(const float* x, float* out, int64_t n, int64_t c) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.y;
  if (r >= n) return;
  const float* xr = x + r * c;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < c; j += kWarpSize) m = fmaxf(m, xr[j]);
  m = WarpMax(m);
  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < c; j += kWarpSize) s = __fadd_rn(s, expf(__fsub_rn(xr[j], m)));
  s = WarpSum(s);
  const float lse = __fadd_rn(m, logf(s));
  for (int64_t j = threadIdx.x; j < c; j += kWarpSize) out[r * c + j] = __fsub_rn(xr[j], lse);
}

__global__ void LogSoftmaxBackwardKernel(const float* y, const float* g, float* out, int64_t n, int64_t c) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.y;
  if (r >= n) return;
  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < c; j += kWarpSize) s = __fadd_rn(s, g[r * c + j]);
  s = WarpSum(s);
  for (int64_t j = threadIdx.x; j < c; j += kWarpSize) {
    out[r * c + j] = __fsub_rn(g[r * c + j], __fmul_rn(expf(y[r * c + j]), s));
  }
}

template <typename L>
__global__ void CountLabelsKernel(const L* labels, int64_t n, int64_t c, unsigned long long* count,
                                  int64_t* first_bad) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (r >= n) return;
  const int64_t y = static_cast<int64_t>(labels[r]);
  if (y >= c) FlagFirst(first_bad, r);
  if (y >= 0) atomicAdd(count, 1ull);
}

// One thread per chunk of kLossRowGrain rows: the chunk's sum in row order
// (double, as the CPU).
template <typename L>
__global__ void NllKernel(const float* logp, const L* labels, int64_t n, int64_t c, double* partial) {
  const int64_t chunk = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t r0 = chunk * kLossRowGrain;
  if (r0 >= n) return;
  const int64_t r1 = min(n, r0 + kLossRowGrain);
  double s = 0.0;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t y = static_cast<int64_t>(labels[r]);
    if (y >= 0) s = __dadd_rn(s, static_cast<double>(logp[r * c + y]));
  }
  partial[chunk] = s;
}

template <typename L>
__global__ void NllGradKernel(const L* labels, int64_t n, int64_t c, float g, float* grad) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n * c) return;
  const int64_t r = i / c, j = i % c;
  grad[i] = static_cast<int64_t>(labels[r]) == j ? g : 0.0f;
}

template <typename L>
__global__ void AccuracyKernel(const float* scores, const L* labels, int64_t n, int64_t c,
                               unsigned long long* hits) {
  const int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (r >= n) return;
  const int64_t y = static_cast<int64_t>(labels[r]);
  if (y < 0) return;
  const float* s = scores + r * c;
  int64_t best = 0;
  for (int64_t j = 1; j < c; ++j) {
    if (s[j] > s[best]) best = j;  // first max wins
  }
  if (best == y) atomicAdd(hits, 1ull);
}

// Counts labels >= 0; the CPU's error for the first label >= c.
Status CountLabels(const char* op, cudaStream_t s, const Tensor& labels, int64_t c, int64_t* count) {
  const int64_t n = labels.size(0);
  const Device dev = labels.device();
  FS_ASSIGN_OR_RETURN(Tensor first_bad, NoErrorYet(dev, s));
  FS_ASSIGN_OR_RETURN(Tensor cnt, Scratch(dev, 1, DType::kI64));
  FS_RETURN_IF_ERROR(CudaCheck("cudaMemsetAsync", cudaMemsetAsync(cnt.raw_data(), 0, 8, s)));
  if (n > 0) {
    WithIndex(labels.dtype(), [&](auto tag) {
      using L = decltype(tag);
      CountLabelsKernel<L><<<Blocks(n, kThreads), kThreads, 0, s>>>(
          labels.data<L>(), n, c, static_cast<unsigned long long*>(cnt.raw_data()), first_bad.data<int64_t>());
    });
    FS_RETURN_IF_ERROR(LaunchCheck("CountLabelsKernel"));
  }
  FS_ASSIGN_OR_RETURN(int64_t bad, ReadBack(first_bad.data<int64_t>(), s));
  if (bad != INT64_MAX) {
    FS_ASSIGN_OR_RETURN(int64_t y, ReadIndex(labels, bad, s));
    return OutOfRange(std::string(op) + ": labels[" + std::to_string(bad) + "] = " + std::to_string(y) +
                      " is out of range for " + std::to_string(c) + " classes");
  }
  FS_ASSIGN_OR_RETURN(*count, ReadBack(cnt.data<int64_t>(), s));
  return Status::OK();
}

}  // namespace

Status LogSoftmax(const ExecContext& ctx, const Tensor& logits, Tensor* out) {
  const int64_t n = logits.size(0), c = logits.size(1);
  if (n == 0 || c == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, logits.device()));
  LogSoftmaxKernel<<<Blocks(n, kRowsPerBlock), dim3(kWarpSize, kRowsPerBlock), 0, s>>>(logits.data<float>(),
                                                                                       out->data<float>(), n, c);
  return LaunchCheck("LogSoftmaxKernel");
}

Status LogSoftmaxBackward(const ExecContext& ctx, const Tensor& out, const Tensor& grad_out,
                          Tensor* grad_logits) {
  const int64_t n = out.size(0), c = out.size(1);
  if (n == 0 || c == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, out.device()));
  LogSoftmaxBackwardKernel<<<Blocks(n, kRowsPerBlock), dim3(kWarpSize, kRowsPerBlock), 0, s>>>(
      out.data<float>(), grad_out.data<float>(), grad_logits->data<float>(), n, c);
  return LaunchCheck("LogSoftmaxBackwardKernel");
}

Status NllLoss(const ExecContext& ctx, const Tensor& logp, const Tensor& labels, float* loss,
               Tensor* grad_logp) {
  const int64_t n = logp.size(0), c = logp.size(1);
  const Device dev = logp.device();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, dev));
  int64_t count = 0;
  FS_RETURN_IF_ERROR(CountLabels("NllLoss", s, labels, c, &count));
  const float g = count > 0 ? -1.0f / static_cast<float>(count) : 0.0f;
  const int64_t chunks = (n + kLossRowGrain - 1) / kLossRowGrain;
  std::vector<double> partial(static_cast<size_t>(chunks), 0.0);
  if (n > 0) {
    FS_ASSIGN_OR_RETURN(Tensor d_partial, Scratch(dev, chunks, DType::kI64));  // doubles
    auto* pp = static_cast<double*>(d_partial.raw_data());
    WithIndex(labels.dtype(), [&](auto tag) {
      using L = decltype(tag);
      NllKernel<L><<<Blocks(chunks, 128), 128, 0, s>>>(logp.data<float>(), labels.data<L>(), n, c, pp);
      if (grad_logp != nullptr && c > 0) {
        NllGradKernel<L><<<Blocks(n * c, kThreads), kThreads, 0, s>>>(labels.data<L>(), n, c, g,
                                                                      grad_logp->data<float>());
      }
    });
    FS_RETURN_IF_ERROR(LaunchCheck("NllKernel"));
    FS_RETURN_IF_ERROR(CudaCheck("cudaMemcpyAsync", cudaMemcpyAsync(partial.data(), pp, chunks * sizeof(double),
                                                                    cudaMemcpyDeviceToHost, s)));
    FS_RETURN_IF_ERROR(Sync(s));
  }
  double total = 0.0;
  for (double v : partial) total += v;
  *loss = count > 0 ? static_cast<float>(-total / static_cast<double>(count)) : 0.0f;
  return Status::OK();
}

Status Accuracy(const ExecContext& ctx, const Tensor& scores, const Tensor& labels, int64_t* correct,
                int64_t* counted) {
  const int64_t n = scores.size(0), c = scores.size(1);
  const Device dev = scores.device();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, dev));
  int64_t count = 0;
  FS_RETURN_IF_ERROR(CountLabels("Accuracy", s, labels, c, &count));
  FS_ASSIGN_OR_RETURN(Tensor hits, Scratch(dev, 1, DType::kI64));
  FS_RETURN_IF_ERROR(CudaCheck("cudaMemsetAsync", cudaMemsetAsync(hits.raw_data(), 0, 8, s)));
  if (n > 0 && c > 0) {
    WithIndex(labels.dtype(), [&](auto tag) {
      using L = decltype(tag);
      AccuracyKernel<L><<<Blocks(n, kThreads), kThreads, 0, s>>>(
          scores.data<float>(), labels.data<L>(), n, c, static_cast<unsigned long long*>(hits.raw_data()));
    });
    FS_RETURN_IF_ERROR(LaunchCheck("AccuracyKernel"));
  }
  FS_ASSIGN_OR_RETURN(*correct, ReadBack(hits.data<int64_t>(), s));
  *counted = count;
  return Status::OK();
}

}  // namespace foresight::kernels::cuda
