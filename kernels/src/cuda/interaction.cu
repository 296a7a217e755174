// DLRM's feature interaction on CUDA, the CPU's arithmetic in the CPU's
// order (the build turns off FMA contraction), so the results are the same
// bits: one thread per output value of the forward (each dot product summed
// over columns in order), one thread per (sample, vector k, column) of the
// backward (terms of z_k's gradient in ascending j).
#include <cuda_runtime.h>

#include <string>

#include "cuda_ops.h"

namespace foresight::kernels::cuda {

namespace {

Status CudaCheck(const char* what, cudaError_t err) {
  if (err == cudaSuccess) return Status::OK();
  return Internal(std::string(what) + " failed: " + cudaGetErrorString(err));
}

unsigned Blocks(int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

__device__ inline const float* Z(const float* xb, const float* eb, int64_t dim, int64_t k) {
  return k == 0 ? xb : eb + (k - 1) * dim;
}

// Output column c of sample b: x's columns, then the pairs (or emb for cat).
__global__ void ForwardKernel(bool dot, int64_t batch, int64_t tables, int64_t d, int64_t e, int64_t width,
                              const float* x, const float* emb, float* out) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= batch * width) return;
  const int64_t b = i / width, c = i % width;
  const float* xb = x + b * d;
  const float* eb = emb + b * tables * e;
  if (c < d) {
    out[i] = xb[c];
    return;
  }
  if (!dot) {
    out[i] = eb[c - d];
    return;
  }
  // Pair p = c - d in row-major order of the strictly lower triangle.
  const int64_t p = c - d;
  int64_t row = 1;
  while ((row + 1) * row / 2 <= p) ++row;
  const int64_t col = p - row * (row - 1) / 2;
  const float* zi = Z(xb, eb, e, row);
  const float* zj = Z(xb, eb, e, col);
  float s = 0.0f;
  for (int64_t k = 0; k < e; ++k) s += zi[k] * zj[k];
  out[i] = s;
}

// Gradient of vector k (0 = x), column c, of sample b.
__global__ void BackwardKernel(bool dot, int64_t batch, int64_t tables, int64_t d, int64_t e, int64_t width,
                               const float* x, const float* emb, const float* g, float* gx, float* ge) {
  const int64_t per_sample = d + tables * e;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= batch * per_sample) return;
  const int64_t b = i / per_sample, r = i % per_sample;
  const float* gb = g + b * width;
  if (!dot) {
    if (r < d) gx[b * d + r] = gb[r];
    else ge[b * tables * e + (r - d)] = gb[r];
    return;
  }
  const int64_t k = r < d ? 0 : 1 + (r - d) / e;
  const int64_t c = r < d ? r : (r - d) % e;
  const float* xb = x + b * d;
  const float* eb = emb + b * tables * e;
  const float* gp = gb + d;
  float acc = k == 0 ? gb[c] : 0.0f;
  for (int64_t j = 0; j <= tables; ++j) {
    if (j == k) continue;
    const float w = k > j ? gp[k * (k - 1) / 2 + j] : gp[j * (j - 1) / 2 + k];
    acc += w * Z(xb, eb, e, j)[c];
  }
  if (k == 0) gx[b * d + c] = acc;
  else ge[b * tables * e + (k - 1) * e + c] = acc;
}

}  // namespace

Status FeatureInteraction(const ExecContext&, Interaction kind, int64_t num_tables, const Tensor& x,
                          const Tensor& emb, Tensor* out) {
  const int64_t batch = x.size(0), d = x.size(1), e = emb.size(1) / num_tables, width = out->size(1);
  FS_RETURN_IF_ERROR(CudaCheck("cudaSetDevice", cudaSetDevice(x.device().index)));
  const int64_t n = batch * width;
  if (n == 0) return Status::OK();
  ForwardKernel<<<Blocks(n, 256), 256>>>(kind == Interaction::kDot, batch, num_tables, d, e, width, x.data<float>(),
                                         emb.data<float>(), out->data<float>());
  FS_RETURN_IF_ERROR(CudaCheck("FeatureInteraction kernel", cudaGetLastError()));
  return CudaCheck("cudaDeviceSynchronize", cudaDeviceSynchronize());
}

Status FeatureInteractionBackward(const ExecContext&, Interaction kind, int64_t num_tables, const Tensor& x,
                                  const Tensor& emb, const Tensor& grad_out, Tensor* grad_x, Tensor* grad_emb) {
  const int64_t batch = x.size(0), d = x.size(1), e = emb.size(1) / num_tables, width = grad_out.size(1);
  FS_RETURN_IF_ERROR(CudaCheck("cudaSetDevice", cudaSetDevice(x.device().index)));
  const int64_t n = batch * (d + num_tables * e);
  if (n == 0) return Status::OK();
  BackwardKernel<<<Blocks(n, 256), 256>>>(kind == Interaction::kDot, batch, num_tables, d, e, width,
                                          x.data<float>(), emb.data<float>(), grad_out.data<float>(),
                                          grad_x->data<float>(), grad_emb->data<float>());
  FS_RETURN_IF_ERROR(CudaCheck("FeatureInteractionBackward kernel", cudaGetLastError()));
  return CudaCheck("cudaDeviceSynchronize", cudaDeviceSynchronize());
}

}  // namespace foresight::kernels::cuda
