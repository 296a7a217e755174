// Dropout on CUDA with the CPU's counter-based draws: element i keeps when
// the word (i & 3) of RngKey::Bits(i / 4, 0) (core/rng.h, shared host and
// device code), shifted to 24 bits and scaled by 2^-24, is >= p. One
// thread per group of four elements makes one Philox call, as the CPU's
// loop does, so masks and outputs are the CPU's bits.
#include <cmath>

#include "cuda_ops.h"
#include "cuda_util.cuh"
#include "../keyed_dropout_ops.h"
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

// Row-keyed: one thread per element, its word from the stream position
// ids[r] * cols + c (DropoutRows' contract; bits equal the CPU's). relu:
// ReluDropoutRows, kept only where also x > 0 (ReLU's test, false for NaN).
__global__ void DropoutRowsKernel(RngKey rng, float p, float scale, const float* x, const int64_t* ids, int64_t cols,
                                  bool relu, float* out, uint8_t* mask, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / cols, c = i - r * cols;
    const uint64_t g = static_cast<uint64_t>(ids[r]) * static_cast<uint64_t>(cols) + static_cast<uint64_t>(c);
    const bool keep = rng.StreamUniform(g, 0) >= p && (!relu || x[i] > 0.0f);  // (w >> 8) * 2^-24: exact
    out[i] = keep ? __fmul_rn(x[i], scale) : 0.0f;
    if (mask != nullptr) mask[i] = keep ? 1 : 0;
  }
}

template <typename I>
__global__ void DropoutEdgeKeysKernel(const int64_t* ip, const I* idx, int64_t num_dst, const int64_t* ids,
                                      int64_t* keys) {
  for (int64_t v = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; v < num_dst;
       v += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    for (int64_t k = ip[v]; k < ip[v + 1]; ++k) keys[k] = DropoutEdgeKey(ids[v], ids[static_cast<int64_t>(idx[k])]);
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

Status DropoutRows(const ExecContext& ctx, float p, const Tensor& x, const Tensor& row_ids, Tensor* out,
                   Tensor* mask, bool relu) {
  const int64_t n = x.numel();
  if (n == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, x.device()));
  const float scale = 1.0f / (1.0f - p);
  const int64_t cols = n / x.size(0);
  const unsigned grid = std::min<unsigned>(Blocks(n, kThreads), 65535u * 16u);
  DropoutRowsKernel<<<grid, kThreads, 0, s>>>(ctx.rng, p, scale, x.data<float>(), row_ids.data<int64_t>(), cols, relu,
                                              out->data<float>(), mask != nullptr ? mask->data<uint8_t>() : nullptr,
                                              n);
  return LaunchCheck("DropoutRowsKernel");
}

Status DropoutEdgeKeys(const ExecContext& ctx, const Csr& csr, const Tensor& src_ids, Tensor* keys) {
  const int64_t num_dst = csr.num_dst();
  if (num_dst == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, csr.device()));
  const unsigned grid = std::min<unsigned>(Blocks(num_dst, kThreads), 65535u * 16u);
  WithIndex(csr.indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    DropoutEdgeKeysKernel<I><<<grid, kThreads, 0, s>>>(csr.indptr.data<int64_t>(), csr.indices.data<I>(), num_dst,
                                                       src_ids.data<int64_t>(), keys->data<int64_t>());
  });
  return LaunchCheck("DropoutEdgeKeysKernel");
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
