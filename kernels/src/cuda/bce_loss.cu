// BCE with logits on CUDA in the CPU's formula and order: each element's
// loss and gradient as the CPU computes them (no FMA contraction), one
// thread per chunk of the CPU's 4096 elements summing its losses in f64 in
// order, and the host adding the chunks in order. CUDA's expf / log1pf and
// glibc's may differ in the last place, so the results agree to rounding,
// not always bit for bit.
#include <cuda_runtime.h>

#include <cmath>
#include <string>
#include <vector>

#include "cuda_ops.h"

namespace foresight::kernels::cuda {

namespace {

constexpr int64_t kBceGrain = 4096;  // the CPU's chunk (kernels/src/cpu/bce_loss.cc)

Status CudaCheck(const char* what, cudaError_t err) {
  if (err == cudaSuccess) return Status::OK();
  return Internal(std::string(what) + " failed: " + cudaGetErrorString(err));
}

__global__ void ChunkKernel(int64_t n, const float* z, const float* y, float inv_n, float* grad, double* partial) {
  const int64_t chunk = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t i0 = chunk * kBceGrain;
  if (i0 >= n) return;
  const int64_t i1 = i0 + kBceGrain < n ? i0 + kBceGrain : n;
  double s = 0.0;
  for (int64_t i = i0; i < i1; ++i) {
    const float zi = z[i], yi = y[i];
    s += static_cast<double>(fmaxf(zi, 0.0f) - zi * yi + log1pf(expf(-fabsf(zi))));
    if (grad != nullptr) {
      const float ez = expf(-fabsf(zi));
      const float sig = zi >= 0 ? 1.0f / (1.0f + ez) : ez / (1.0f + ez);
      grad[i] = (sig - yi) * inv_n;
    }
  }
  partial[chunk] = s;
}

}  // namespace

Status BceWithLogits(const ExecContext&, const Tensor& logits, const Tensor& targets, float* loss,
                     Tensor* grad_logits) {
  const int64_t n = logits.numel();
  *loss = 0.0f;
  if (n == 0) return Status::OK();
  FS_RETURN_IF_ERROR(CudaCheck("cudaSetDevice", cudaSetDevice(logits.device().index)));
  const int64_t chunks = (n + kBceGrain - 1) / kBceGrain;
  // f64 partial sums in an i64 tensor of the same size (no f64 dtype).
  FS_ASSIGN_OR_RETURN(Tensor partial, Tensor::EmptyOn(logits.device(), {chunks}, DType::kI64));
  ChunkKernel<<<static_cast<unsigned>((chunks + 127) / 128), 128>>>(
      n, logits.data<float>(), targets.data<float>(), 1.0f / static_cast<float>(n),
      grad_logits != nullptr ? grad_logits->data<float>() : nullptr, static_cast<double*>(partial.raw_data()));
  FS_RETURN_IF_ERROR(CudaCheck("BceWithLogits kernel", cudaGetLastError()));
  std::vector<double> host(static_cast<size_t>(chunks));
  FS_RETURN_IF_ERROR(CudaCheck("cudaMemcpy", cudaMemcpy(host.data(), partial.raw_data(), host.size() * sizeof(double),
                                                        cudaMemcpyDeviceToHost)));
  double total = 0.0;
  for (double s : host) total += s;
  *loss = static_cast<float>(total / static_cast<double>(n));
  return Status::OK();
}

}  // namespace foresight::kernels::cuda
