// GCN normalisation on CUDA, the CPU's result exactly: each row keeps its
// edges in order and gets its missing self loop last, out-degrees are
// integer counts (atomic adds of integers: order-free), and each weight is
// 1/sqrt(deg_in * deg_out) in double, which the GPU rounds as the CPU does
// (IEEE division and square root), then rounded once to float.
#include <cub/device/device_scan.cuh>

#include <string>
#include <vector>

#include "cuda_ops.h"
#include "cuda_util.cuh"

namespace foresight::kernels::cuda {

namespace {

// lens[v + 1] = row v's length in the result (lens[0] set to 0 by the caller).
template <typename I>
__global__ void RowLengthsKernel(const int64_t* ip, const I* idx, int64_t num_dst, int64_t* lens) {
  const int64_t v = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (v >= num_dst) return;
  bool has_self = false;
  for (int64_t e = ip[v]; e < ip[v + 1]; ++e) has_self |= static_cast<int64_t>(idx[e]) == v;
  lens[v + 1] = ip[v + 1] - ip[v] + (has_self ? 0 : 1);
}

template <typename I>
__global__ void FillKernel(const int64_t* ip, const I* idx, const int64_t* np, int64_t num_dst, I* ni) {
  const int64_t v = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (v >= num_dst) return;
  int64_t k = np[v];
  for (int64_t e = ip[v]; e < ip[v + 1]; ++e) ni[k++] = idx[e];
  if (k < np[v + 1]) ni[k] = static_cast<I>(v);
}

template <typename I>
__global__ void CountOutKernel(const I* ni, int64_t n, unsigned long long* dout) {
  const int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k < n) atomicAdd(dout + static_cast<int64_t>(ni[k]), 1ull);
}

template <typename I>
__global__ void CheckGivenKernel(const I* ni, int64_t n, const int64_t* deg, int64_t* first_bad) {
  const int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k < n && deg[static_cast<int64_t>(ni[k])] < 1) FlagFirst(first_bad, k);
}

template <typename I>
__global__ void WeightsKernel(const int64_t* np, const I* ni, const int64_t* deg, int64_t num_dst, int64_t n,
                              float* nw) {
  const int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= n) return;
  const int64_t v = RowOfEdge(np, num_dst, k);
  const double din = static_cast<double>(np[v + 1] - np[v]);
  const double d = __dmul_rn(din, static_cast<double>(deg[static_cast<int64_t>(ni[k])]));
  nw[k] = static_cast<float>(__ddiv_rn(1.0, __dsqrt_rn(d)));
}

template <typename I>
__global__ void OutDegreesKernel(const int64_t* ip, const I* idx, int64_t num_dst, unsigned long long* dout) {
  const int64_t v = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (v >= num_dst) return;
  bool has_self = false;
  for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
    const int64_t u = static_cast<int64_t>(idx[e]);
    has_self |= u == v;
    atomicAdd(dout + u, 1ull);
  }
  if (!has_self) atomicAdd(dout + v, 1ull);
}

// `given` (null: count in the result) holds deg_out per source.
template <typename I>
Status Normalize(const ExecContext& ctx, const Csr& csr, const int64_t* given, Csr* out) {
  const Device dev = csr.device();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, dev));
  const int64_t num_dst = csr.num_dst(), num_src = csr.num_src;
  const int64_t* ip = csr.indptr.data<int64_t>();
  const I* idx = csr.indices.data<I>();
  if (num_dst + 1 > INT32_MAX) {
    return InvalidArgument("GcnNormalize on cuda: " + std::to_string(num_dst) +
                           " destinations exceed the scan's 2^31 - 1 items");
  }

  FS_ASSIGN_OR_RETURN(Tensor lens, Tensor::EmptyOn(dev, {num_dst + 1}, DType::kI64));
  FS_ASSIGN_OR_RETURN(Tensor indptr, Tensor::EmptyOn(dev, {num_dst + 1}, DType::kI64));
  FS_RETURN_IF_ERROR(CudaCheck("cudaMemsetAsync", cudaMemsetAsync(lens.raw_data(), 0, 8, s)));
  if (num_dst > 0) {
    RowLengthsKernel<I><<<Blocks(num_dst, kThreads), kThreads, 0, s>>>(ip, idx, num_dst, lens.data<int64_t>());
    FS_RETURN_IF_ERROR(LaunchCheck("RowLengthsKernel"));
  }
  size_t bytes = 0;
  const int items = static_cast<int>(num_dst + 1);
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceScan::InclusiveSum",
                               cub::DeviceScan::InclusiveSum(nullptr, bytes, lens.data<int64_t>(),
                                                             indptr.data<int64_t>(), items, s)));
  FS_ASSIGN_OR_RETURN(Tensor tmp, Scratch(dev, static_cast<int64_t>(bytes), DType::kU8));
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceScan::InclusiveSum",
                               cub::DeviceScan::InclusiveSum(tmp.raw_data(), bytes, lens.data<int64_t>(),
                                                             indptr.data<int64_t>(), items, s)));
  const int64_t* np = indptr.data<int64_t>();
  FS_ASSIGN_OR_RETURN(const int64_t num_edges, ReadBack(np + num_dst, s));

  FS_ASSIGN_OR_RETURN(Tensor indices, Tensor::EmptyOn(dev, {num_edges}, csr.indices.dtype()));
  FS_ASSIGN_OR_RETURN(Tensor weight, Tensor::EmptyOn(dev, {num_edges}, DType::kF32));
  I* ni = indices.data<I>();
  if (num_dst > 0) {
    FillKernel<I><<<Blocks(num_dst, kThreads), kThreads, 0, s>>>(ip, idx, np, num_dst, ni);
    FS_RETURN_IF_ERROR(LaunchCheck("FillKernel"));
  }
  Tensor counted;
  const int64_t* deg = given;
  if (given == nullptr) {
    FS_ASSIGN_OR_RETURN(counted, Scratch(dev, num_src, DType::kI64));
    FS_RETURN_IF_ERROR(CudaCheck("cudaMemsetAsync", cudaMemsetAsync(counted.raw_data(), 0, num_src * 8, s)));
    if (num_edges > 0) {
      CountOutKernel<I><<<Blocks(num_edges, kThreads), kThreads, 0, s>>>(
          ni, num_edges, static_cast<unsigned long long*>(counted.raw_data()));
      FS_RETURN_IF_ERROR(LaunchCheck("CountOutKernel"));
    }
    deg = counted.data<int64_t>();
  } else if (num_edges > 0) {
    // The first edge (row order) reading a source of degree < 1.
    FS_ASSIGN_OR_RETURN(Tensor bad, NoErrorYet(dev, s));
    CheckGivenKernel<I><<<Blocks(num_edges, kThreads), kThreads, 0, s>>>(ni, num_edges, given, bad.data<int64_t>());
    FS_RETURN_IF_ERROR(LaunchCheck("CheckGivenKernel"));
    FS_ASSIGN_OR_RETURN(int64_t k, ReadBack(bad.data<int64_t>(), s));
    if (k != INT64_MAX) {
      FS_ASSIGN_OR_RETURN(int64_t u, ReadIndex(indices, k, s));
      FS_ASSIGN_OR_RETURN(int64_t du, ReadBack(given + u, s));
      std::vector<int64_t> host_np(static_cast<size_t>(num_dst + 1));
      FS_RETURN_IF_ERROR(CudaCheck("cudaMemcpy", cudaMemcpy(host_np.data(), np, host_np.size() * 8,
                                                            cudaMemcpyDeviceToHost)));
      int64_t v = 0;
      while (v + 1 < num_dst && host_np[v + 1] <= k) ++v;
      return InvalidArgument("GcnNormalizeWithOutDegrees: source " + std::to_string(u) + " (read by row " +
                             std::to_string(v) + ") has out-degree " + std::to_string(du) + "; it must be >= 1");
    }
  }
  if (num_edges > 0) {
    WeightsKernel<I><<<Blocks(num_edges, kThreads), kThreads, 0, s>>>(np, ni, deg, num_dst, num_edges,
                                                                     weight.data<float>());
    FS_RETURN_IF_ERROR(LaunchCheck("WeightsKernel"));
  }
  FS_RETURN_IF_ERROR(Sync(s));
  out->indptr = indptr;
  out->indices = indices;
  out->num_src = num_src;
  out->edge_weight = weight;
  return Status::OK();
}

}  // namespace

Status GcnNormalize(const ExecContext& ctx, const Csr& csr, Csr* out) {
  return WithIndex(csr.indices.dtype(), [&](auto tag) { return Normalize<decltype(tag)>(ctx, csr, nullptr, out); });
}

Status GcnOutDegrees(const ExecContext& ctx, const Csr& csr, Tensor* out_degree) {
  const Device dev = csr.device();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, dev));
  FS_ASSIGN_OR_RETURN(Tensor degree, Tensor::EmptyOn(dev, {csr.num_src}, DType::kI64));
  FS_RETURN_IF_ERROR(CudaCheck("cudaMemsetAsync", cudaMemsetAsync(degree.raw_data(), 0, csr.num_src * 8, s)));
  const int64_t num_dst = csr.num_dst();
  if (num_dst > 0) {
    WithIndex(csr.indices.dtype(), [&](auto tag) {
      using I = decltype(tag);
      OutDegreesKernel<I><<<Blocks(num_dst, kThreads), kThreads, 0, s>>>(
          csr.indptr.data<int64_t>(), csr.indices.data<I>(), num_dst,
          static_cast<unsigned long long*>(degree.raw_data()));
    });
    FS_RETURN_IF_ERROR(LaunchCheck("OutDegreesKernel"));
  }
  *out_degree = degree;
  return Status::OK();
}

Status GcnNormalizeWithOutDegrees(const ExecContext& ctx, const Csr& csr, const Tensor& src_out_degree,
                                  Csr* out) {
  return WithIndex(csr.indices.dtype(), [&](auto tag) {
    return Normalize<decltype(tag)>(ctx, csr, src_out_degree.data<int64_t>(), out);
  });
}

}  // namespace foresight::kernels::cuda
