// SpMM aggregation on CUDA, in the CPU's order. Forward: one warp per
// destination row, lanes over feature columns, each column summed (or
// maxed) over the row's edges in CSR order. Backward sum/mean: one warp
// per source row gathering over the transposed CSR in its order, never an
// atomic scatter. Max backward: the (argmax, column) targets grouped by a
// stable sort (GroupByKey), each target summing its gradients in
// ascending destination order, as the CPU's scatter does.
//
// Products accumulated as acc += w * x use one fused multiply-add, as the
// CPU build contracts them (x86-64-v3 with FMA, GCC's default contraction
// for C++): weighted sums then match the CPU bit for bit on that build;
// unweighted sums, means and max always do.
#include "cuda_ops.h"
#include "cuda_util.cuh"

namespace foresight::kernels::cuda {

namespace {

constexpr int kRowsPerBlock = kThreads / kWarpSize;

template <typename I>
__global__ void SumMeanKernel(const int64_t* ip, const I* idx, const float* w, bool mean, const float* x,
                              int64_t num_dst, int64_t f, float* out) {
  const int64_t v = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.y;
  if (v >= num_dst) return;
  const int64_t e0 = ip[v], e1 = ip[v + 1];
  for (int64_t j = threadIdx.x; j < f; j += kWarpSize) {
    float acc = 0.0f;
    for (int64_t e = e0; e < e1; ++e) {
      const float xv = x[static_cast<int64_t>(idx[e]) * f + j];
      acc = w != nullptr ? __fmaf_rn(w[e], xv, acc) : __fadd_rn(acc, xv);
    }
    if (mean && e1 > e0) acc = __fdiv_rn(acc, static_cast<float>(e1 - e0));
    out[v * f + j] = acc;
  }
}

template <typename I>
__global__ void MaxKernel(const int64_t* ip, const I* idx, const float* x, int64_t num_dst, int64_t f, float* out,
                          int64_t* argmax) {
  const int64_t v = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.y;
  if (v >= num_dst) return;
  const int64_t e0 = ip[v], e1 = ip[v + 1];
  for (int64_t j = threadIdx.x; j < f; j += kWarpSize) {
    if (e0 == e1) {
      out[v * f + j] = 0.0f;
      if (argmax != nullptr) argmax[v * f + j] = -1;
      continue;
    }
    float best = x[static_cast<int64_t>(idx[e0]) * f + j];
    int64_t at = e0;
    for (int64_t e = e0 + 1; e < e1; ++e) {
      const float xv = x[static_cast<int64_t>(idx[e]) * f + j];
      if (xv > best) {  // strict: the first maximum wins ties
        best = xv;
        at = e;
      }
    }
    out[v * f + j] = best;
    if (argmax != nullptr) argmax[v * f + j] = static_cast<int64_t>(idx[at]);
  }
}

template <typename I>
__global__ void BackwardSumMeanKernel(const int64_t* ip, const int64_t* tp, const I* tidx, const float* w,
                                      const int64_t* perm, bool mean, const float* g, int64_t num_src, int64_t f,
                                      float* gx) {
  const int64_t u = blockIdx.x * static_cast<int64_t>(kRowsPerBlock) + threadIdx.y;
  if (u >= num_src) return;
  const int64_t k0 = tp[u], k1 = tp[u + 1];
  for (int64_t j = threadIdx.x; j < f; j += kWarpSize) {
    float acc = 0.0f;
    for (int64_t k = k0; k < k1; ++k) {
      const int64_t v = static_cast<int64_t>(tidx[k]);
      const float go = g[v * f + j];
      if (w != nullptr || mean) {
        const float we = mean ? __fdiv_rn(1.0f, static_cast<float>(ip[v + 1] - ip[v])) : w[perm[k]];
        acc = __fmaf_rn(we, go, acc);
      } else {
        acc = __fadd_rn(acc, go);
      }
    }
    gx[u * f + j] = acc;
  }
}

// key of output element i = v*f + j: its target argmax[i]*f + j, or `skip`
// for an empty row (or an argmax outside [0, num_src), which the CPU
// would not survive either).
__global__ void MaxKeysKernel(const int64_t* argmax, int64_t n, int64_t f, int64_t num_src, int64_t* keys) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int64_t a = argmax[i];
  keys[i] = a >= 0 && a < num_src ? a * f + i % f : num_src * f;
}

__global__ void MaxScatterKernel(const float* g, const int64_t* order, const int64_t* starts, const int64_t* key,
                                 int64_t groups, float* gx) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= groups) return;
  float acc = 0.0f;
  for (int64_t k = starts[t]; k < starts[t + 1]; ++k) acc = __fadd_rn(acc, g[order[k]]);
  gx[key[t]] = acc;
}

}  // namespace

Status Spmm(const ExecContext& ctx, const Csr& csr, Reduce reduce, const Tensor& x, Tensor* out,
            Tensor* argmax) {
  const int64_t num_dst = csr.num_dst(), f = x.size(1);
  if (num_dst == 0 || f == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, csr.device()));
  const dim3 block(kWarpSize, kRowsPerBlock);
  const unsigned grid = Blocks(num_dst, kRowsPerBlock);
  WithIndex(csr.indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    if (reduce == Reduce::kMax) {
      MaxKernel<I><<<grid, block, 0, s>>>(csr.indptr.data<int64_t>(), csr.indices.data<I>(), x.data<float>(),
                                          num_dst, f, out->data<float>(),
                                          argmax != nullptr ? argmax->data<int64_t>() : nullptr);
    } else {
      SumMeanKernel<I><<<grid, block, 0, s>>>(
          csr.indptr.data<int64_t>(), csr.indices.data<I>(),
          csr.edge_weight.defined() ? csr.edge_weight.data<float>() : nullptr, reduce == Reduce::kMean,
          x.data<float>(), num_dst, f, out->data<float>());
    }
  });
  return LaunchCheck("SpmmKernel");
}

Status SpmmBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t, const Tensor& edge_perm,
                    Reduce reduce, const Tensor& grad_out, const Tensor& argmax, Tensor* grad_x) {
  const int64_t num_src = csr.num_src, num_dst = csr.num_dst(), f = grad_out.size(1);
  if (num_src == 0 || f == 0) return Status::OK();
  const Device dev = csr.device();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, dev));
  if (reduce != Reduce::kMax) {
    const bool mean = reduce == Reduce::kMean;
    const float* w = csr.edge_weight.defined() && !mean ? csr.edge_weight.data<float>() : nullptr;
    WithIndex(csr.indices.dtype(), [&](auto tag) {
      using I = decltype(tag);
      BackwardSumMeanKernel<I><<<Blocks(num_src, kRowsPerBlock), dim3(kWarpSize, kRowsPerBlock), 0, s>>>(
          csr.indptr.data<int64_t>(), csr_t.indptr.data<int64_t>(), csr_t.indices.data<I>(), w,
          w != nullptr ? edge_perm.data<int64_t>() : nullptr, mean, grad_out.data<float>(), num_src, f,
          grad_x->data<float>());
    });
    return LaunchCheck("BackwardSumMeanKernel");
  }
  FS_RETURN_IF_ERROR(CudaCheck("cudaMemsetAsync",
                               cudaMemsetAsync(grad_x->raw_data(), 0, num_src * f * sizeof(float), s)));
  const int64_t n = num_dst * f;
  if (n == 0) return Status::OK();
  const int64_t skip = num_src * f;  // above every target
  FS_ASSIGN_OR_RETURN(Tensor keys, Scratch(dev, n, DType::kI64));
  MaxKeysKernel<<<Blocks(n, kThreads), kThreads, 0, s>>>(argmax.data<int64_t>(), n, f, num_src, keys.data<int64_t>());
  FS_RETURN_IF_ERROR(LaunchCheck("MaxKeysKernel"));
  FS_ASSIGN_OR_RETURN(Segments seg, GroupByKey(dev, s, keys, n, BitsFor(skip + 1), skip));
  MaxScatterKernel<<<Blocks(seg.num_groups, kThreads), kThreads, 0, s>>>(
      grad_out.data<float>(), seg.order.data<int64_t>(), seg.starts.data<int64_t>(), seg.group_key.data<int64_t>(),
      seg.num_groups, grad_x->data<float>());
  FS_RETURN_IF_ERROR(LaunchCheck("MaxScatterKernel"));
  return Sync(s);
}

}  // namespace foresight::kernels::cuda
