// GAT edge attention on CUDA, in the CPU's order: per-destination values
// loop over the row's edges in CSR order, per-source gradients gather over
// the transposed CSR (ascending edge position), so every sum has the CPU's
// fixed order and no atomics are used. Accumulations acc += a * b are one
// fused multiply-add, as the CPU build contracts them (see spmm.cu); the
// softmax's exp comes from CUDA's library (within an ulp or two of glibc).
#include <cmath>

#include "cuda_ops.h"
#include "cuda_util.cuh"

namespace foresight::kernels::cuda {

namespace {

constexpr int kRowsPerBlock = kThreads / kWarpSize;

__device__ inline float LeakyRelu(float s, float slope) { return s > 0.0f ? s : __fmul_rn(s, slope); }
__device__ inline float LeakyReluGrad(float s, float slope) { return s > 0.0f ? 1.0f : slope; }

template <typename I>
__global__ void ScoresKernel(const int64_t* ip, const I* idx, int64_t num_dst, int64_t n, int64_t h,
                             const float* el, const float* er, float slope, float* scores) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= n * h) return;
  const int64_t e = t / h, j = t % h;
  const int64_t v = RowOfEdge(ip, num_dst, e);
  scores[t] = LeakyRelu(__fadd_rn(el[static_cast<int64_t>(idx[e]) * h + j], er[v * h + j]), slope);
}

// grad_er[v, j]: over v's edges in order.
template <typename I>
__global__ void GradErKernel(const int64_t* ip, const I* idx, int64_t num_dst, int64_t h, const float* el,
                             const float* er, float slope, const float* g, float* out) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= num_dst * h) return;
  const int64_t v = t / h, j = t % h;
  const float r = er[t];
  float acc = 0.0f;
  for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
    const float l = el[static_cast<int64_t>(idx[e]) * h + j];
    acc = __fmaf_rn(g[e * h + j], LeakyReluGrad(__fadd_rn(l, r), slope), acc);
  }
  out[t] = acc;
}

// grad_el[u, j]: over u's out-edges in ascending original position.
template <typename I>
__global__ void GradElKernel(const int64_t* tp, const I* tidx, const int64_t* perm, int64_t num_src, int64_t h,
                             const float* el, const float* er, float slope, const float* g, float* out) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= num_src * h) return;
  const int64_t u = t / h, j = t % h;
  const float l = el[t];
  float acc = 0.0f;
  for (int64_t k = tp[u]; k < tp[u + 1]; ++k) {
    const float r = er[static_cast<int64_t>(tidx[k]) * h + j];
    acc = __fmaf_rn(g[perm[k] * h + j], LeakyReluGrad(__fadd_rn(l, r), slope), acc);
  }
  out[t] = acc;
}

__global__ void SoftmaxKernel(const int64_t* ip, int64_t num_dst, int64_t h, const float* sc, float* out) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= num_dst * h) return;
  const int64_t v = t / h, j = t % h;
  const int64_t e0 = ip[v], e1 = ip[v + 1];
  if (e0 == e1) return;
  float m = -INFINITY;
  for (int64_t e = e0; e < e1; ++e) m = fmaxf(m, sc[e * h + j]);
  float sum = 0.0f;
  for (int64_t e = e0; e < e1; ++e) {
    const float x = expf(__fsub_rn(sc[e * h + j], m));
    out[e * h + j] = x;
    sum = __fadd_rn(sum, x);
  }
  for (int64_t e = e0; e < e1; ++e) out[e * h + j] = __fdiv_rn(out[e * h + j], sum);
}

__global__ void SoftmaxBackwardKernel(const int64_t* ip, int64_t num_dst, int64_t h, const float* y, const float* g,
                                      float* out) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= num_dst * h) return;
  const int64_t v = t / h, j = t % h;
  float dot = 0.0f;
  for (int64_t e = ip[v]; e < ip[v + 1]; ++e) dot = __fmaf_rn(y[e * h + j], g[e * h + j], dot);
  for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
    out[e * h + j] = __fmul_rn(y[e * h + j], __fsub_rn(g[e * h + j], dot));
  }
}

// out[v, c] (c = head * d + k): one warp per destination, lanes over c.
template <typename I>
__global__ void AggregateKernel(const int64_t* ip, const I* idx, int64_t num_dst, int64_t h, int64_t d,
                                const float* alpha, const float* x, float* out) {
  const int64_t v = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.y;
  if (v >= num_dst) return;
  const int64_t hd = h * d;
  for (int64_t c = threadIdx.x; c < hd; c += kWarpSize) {
    const int64_t j = c / d;
    float acc = 0.0f;
    for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
      acc = __fmaf_rn(alpha[e * h + j], x[static_cast<int64_t>(idx[e]) * hd + c], acc);
    }
    out[v * hd + c] = acc;
  }
}

template <typename I>
__global__ void GradAlphaKernel(const int64_t* ip, const I* idx, int64_t num_dst, int64_t n, int64_t h, int64_t d,
                                const float* x, const float* g, float* out) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= n * h) return;
  const int64_t e = t / h, j = t % h, hd = h * d;
  const int64_t v = RowOfEdge(ip, num_dst, e);
  const float* gv = g + v * hd + j * d;
  const float* xr = x + static_cast<int64_t>(idx[e]) * hd + j * d;
  float s = 0.0f;
  for (int64_t k = 0; k < d; ++k) s = __fmaf_rn(gv[k], xr[k], s);
  out[t] = s;
}

template <typename I>
__global__ void GradXKernel(const int64_t* tp, const I* tidx, const int64_t* perm, int64_t num_src, int64_t h,
                            int64_t d, const float* alpha, const float* g, float* out) {
  const int64_t u = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.y;
  if (u >= num_src) return;
  const int64_t hd = h * d;
  for (int64_t c = threadIdx.x; c < hd; c += kWarpSize) {
    const int64_t j = c / d;
    float acc = 0.0f;
    for (int64_t k = tp[u]; k < tp[u + 1]; ++k) {
      acc = __fmaf_rn(alpha[perm[k] * h + j], g[static_cast<int64_t>(tidx[k]) * hd + c], acc);
    }
    out[u * hd + c] = acc;
  }
}

}  // namespace

Status GatEdgeScores(const ExecContext& ctx, const Csr& csr, const Tensor& el, const Tensor& er,
                     float slope, Tensor* scores) {
  const int64_t n = csr.num_edges(), h = el.size(1);
  if (n == 0 || h == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, csr.device()));
  WithIndex(csr.indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    ScoresKernel<I><<<Blocks(n * h, kThreads), kThreads, 0, s>>>(csr.indptr.data<int64_t>(), csr.indices.data<I>(),
                                                                 csr.num_dst(), n, h, el.data<float>(),
                                                                 er.data<float>(), slope, scores->data<float>());
  });
  return LaunchCheck("ScoresKernel");
}

Status GatEdgeScoresBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t,
                             const Tensor& edge_perm, const Tensor& el, const Tensor& er, float slope,
                             const Tensor& grad_scores, Tensor* grad_el, Tensor* grad_er) {
  const int64_t h = el.size(1), num_dst = csr.num_dst(), num_src = csr.num_src;
  if (h == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, csr.device()));
  WithIndex(csr.indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    if (grad_er != nullptr && num_dst > 0) {
      GradErKernel<I><<<Blocks(num_dst * h, kThreads), kThreads, 0, s>>>(
          csr.indptr.data<int64_t>(), csr.indices.data<I>(), num_dst, h, el.data<float>(), er.data<float>(), slope,
          grad_scores.data<float>(), grad_er->data<float>());
    }
    if (grad_el != nullptr && num_src > 0) {
      GradElKernel<I><<<Blocks(num_src * h, kThreads), kThreads, 0, s>>>(
          csr_t.indptr.data<int64_t>(), csr_t.indices.data<I>(), edge_perm.data<int64_t>(), num_src, h,
          el.data<float>(), er.data<float>(), slope, grad_scores.data<float>(), grad_el->data<float>());
    }
  });
  return LaunchCheck("GatEdgeScoresBackward kernels");
}

Status EdgeSoftmax(const ExecContext& ctx, const Csr& csr, const Tensor& scores, Tensor* out) {
  const int64_t h = scores.size(1), num_dst = csr.num_dst();
  if (h == 0 || num_dst == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, csr.device()));
  SoftmaxKernel<<<Blocks(num_dst * h, kThreads), kThreads, 0, s>>>(csr.indptr.data<int64_t>(), num_dst, h,
                                                                  scores.data<float>(), out->data<float>());
  return LaunchCheck("SoftmaxKernel");
}

Status EdgeSoftmaxBackward(const ExecContext& ctx, const Csr& csr, const Tensor& out,
                           const Tensor& grad_out, Tensor* grad_scores) {
  const int64_t h = out.size(1), num_dst = csr.num_dst();
  if (h == 0 || num_dst == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, csr.device()));
  SoftmaxBackwardKernel<<<Blocks(num_dst * h, kThreads), kThreads, 0, s>>>(
      csr.indptr.data<int64_t>(), num_dst, h, out.data<float>(), grad_out.data<float>(), grad_scores->data<float>());
  return LaunchCheck("SoftmaxBackwardKernel");
}

Status SpmmEdgeHeads(const ExecContext& ctx, const Csr& csr, const Tensor& alpha, const Tensor& x,
                     Tensor* out) {
  const int64_t num_dst = csr.num_dst(), h = alpha.size(1), d = x.size(2);
  if (num_dst == 0 || h * d == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, csr.device()));
  WithIndex(csr.indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    AggregateKernel<I><<<Blocks(num_dst, kRowsPerBlock), dim3(kWarpSize, kRowsPerBlock), 0, s>>>(
        csr.indptr.data<int64_t>(), csr.indices.data<I>(), num_dst, h, d, alpha.data<float>(), x.data<float>(),
        out->data<float>());
  });
  return LaunchCheck("AggregateKernel");
}

Status SpmmEdgeHeadsBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t,
                             const Tensor& edge_perm, const Tensor& alpha, const Tensor& x,
                             const Tensor& grad_out, Tensor* grad_alpha, Tensor* grad_x) {
  const int64_t num_dst = csr.num_dst(), num_src = csr.num_src, n = csr.num_edges();
  const int64_t h = alpha.size(1), d = x.size(2);
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, csr.device()));
  WithIndex(csr.indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    if (grad_alpha != nullptr && n * h > 0) {
      GradAlphaKernel<I><<<Blocks(n * h, kThreads), kThreads, 0, s>>>(
          csr.indptr.data<int64_t>(), csr.indices.data<I>(), num_dst, n, h, d, x.data<float>(),
          grad_out.data<float>(), grad_alpha->data<float>());
    }
    if (grad_x != nullptr && num_src > 0 && h * d > 0) {
      GradXKernel<I><<<Blocks(num_src, kRowsPerBlock), dim3(kWarpSize, kRowsPerBlock), 0, s>>>(
          csr_t.indptr.data<int64_t>(), csr_t.indices.data<I>(), edge_perm.data<int64_t>(), num_src, h, d,
          alpha.data<float>(), grad_out.data<float>(), grad_x->data<float>());
    }
  });
  return LaunchCheck("SpmmEdgeHeadsBackward kernels");
}

}  // namespace foresight::kernels::cuda
