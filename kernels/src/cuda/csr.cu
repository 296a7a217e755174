// Csr validation and transpose on CUDA. The transpose is a stable radix
// sort of the edges by source (GroupByKey), so each row of the result
// lists its edges by ascending original position, as the CPU's counting
// sort does: the same indptr, indices and edge_perm.
#include <cub/device/device_scan.cuh>

#include <string>

#include "cuda_ops.h"
#include "cuda_util.cuh"

namespace foresight::kernels::cuda {

namespace {

__global__ void DecreasingKernel(const int64_t* ip, int64_t num_dst, int64_t* first_bad) {
  const int64_t v = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (v < num_dst && ip[v + 1] < ip[v]) FlagFirst(first_bad, v);
}

template <typename I>
__global__ void IndexRangeKernel(const I* idx, int64_t n, int64_t num_src, int64_t* first_bad) {
  const int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  const int64_t u = static_cast<int64_t>(idx[e]);
  if (u < 0 || u >= num_src) FlagFirst(first_bad, e);
}

template <typename I>
__global__ void SourceKeysKernel(const I* idx, int64_t n, int64_t* keys) {
  const int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (e < n) keys[e] = static_cast<int64_t>(idx[e]);
}

// counts[u + 1] = edges of source u (counts zeroed before).
__global__ void GroupCountsKernel(const int64_t* starts, const int64_t* key, int64_t groups, int64_t* counts) {
  const int64_t g = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (g < groups) counts[key[g] + 1] = starts[g + 1] - starts[g];
}

template <typename I>
__global__ void TransposedKernel(const int64_t* ip, int64_t num_dst, const int64_t* perm, const float* w, int64_t n,
                                 I* tidx, float* tw) {
  const int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= n) return;
  const int64_t e = perm[k];
  tidx[k] = static_cast<I>(RowOfEdge(ip, num_dst, e));
  if (w != nullptr) tw[k] = w[e];
}

}  // namespace

Status ValidateCsr(const Csr& csr, const char* what) {
  const Device dev = csr.device();
  FS_RETURN_IF_ERROR(CudaCheck("cudaSetDevice", cudaSetDevice(dev.index)));
  const cudaStream_t s = nullptr;  // no context: the default stream
  const int64_t num_dst = csr.num_dst(), num_edges = csr.num_edges();
  const int64_t* ip = csr.indptr.data<int64_t>();
  FS_ASSIGN_OR_RETURN(int64_t first, ReadBack(ip, s));
  if (first != 0) {
    return InvalidArgument(std::string(what) + ".indptr[0] = " + std::to_string(first) + ", expected 0");
  }
  FS_ASSIGN_OR_RETURN(Tensor bad, NoErrorYet(dev, s));
  DecreasingKernel<<<Blocks(num_dst, kThreads), kThreads, 0, s>>>(ip, num_dst, bad.data<int64_t>());
  FS_RETURN_IF_ERROR(LaunchCheck("DecreasingKernel"));
  FS_ASSIGN_OR_RETURN(int64_t v, ReadBack(bad.data<int64_t>(), s));
  if (v != INT64_MAX) {
    FS_ASSIGN_OR_RETURN(int64_t a, ReadBack(ip + v, s));
    FS_ASSIGN_OR_RETURN(int64_t b, ReadBack(ip + v + 1, s));
    return InvalidArgument(std::string(what) + ".indptr[" + std::to_string(v + 1) + "] = " + std::to_string(b) +
                           " is less than indptr[" + std::to_string(v) + "] = " + std::to_string(a) +
                           " (indptr must not decrease)");
  }
  FS_ASSIGN_OR_RETURN(int64_t last, ReadBack(ip + num_dst, s));
  if (last != num_edges) {
    return InvalidArgument(std::string(what) + ".indptr[" + std::to_string(num_dst) + "] = " +
                           std::to_string(last) + ", expected the number of edges " + std::to_string(num_edges));
  }
  if (num_edges == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(Tensor bad_e, NoErrorYet(dev, s));
  WithIndex(csr.indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    IndexRangeKernel<I><<<Blocks(num_edges, kThreads), kThreads, 0, s>>>(csr.indices.data<I>(), num_edges,
                                                                          csr.num_src, bad_e.data<int64_t>());
  });
  FS_RETURN_IF_ERROR(LaunchCheck("IndexRangeKernel"));
  FS_ASSIGN_OR_RETURN(int64_t e, ReadBack(bad_e.data<int64_t>(), s));
  if (e == INT64_MAX) return Status::OK();
  FS_ASSIGN_OR_RETURN(int64_t u, ReadIndex(csr.indices, e, s));
  return OutOfRange(std::string(what) + ".indices[" + std::to_string(e) + "] = " + std::to_string(u) +
                    " is out of range [0, " + std::to_string(csr.num_src) + ")");
}

Status TransposeCsr(const ExecContext& ctx, const Csr& csr, Csr* out, Tensor* edge_perm) {
  const Device dev = csr.device();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, dev));
  const int64_t num_dst = csr.num_dst(), num_src = csr.num_src, n = csr.num_edges();
  if (num_src + 1 > INT32_MAX) {
    return InvalidArgument("TransposeCsr on cuda: " + std::to_string(num_src) +
                           " sources exceed the scan's 2^31 - 1 items");
  }
  FS_ASSIGN_OR_RETURN(Tensor keys, Scratch(dev, n, DType::kI64));
  WithIndex(csr.indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    SourceKeysKernel<I><<<Blocks(n, kThreads), kThreads, 0, s>>>(csr.indices.data<I>(), n, keys.data<int64_t>());
  });
  FS_RETURN_IF_ERROR(LaunchCheck("SourceKeysKernel"));
  FS_ASSIGN_OR_RETURN(Segments seg, GroupByKey(dev, s, keys, n, BitsFor(num_src), -1));

  // indptr: per-source counts, then an inclusive scan from counts[0] = 0.
  FS_ASSIGN_OR_RETURN(Tensor counts, Tensor::EmptyOn(dev, {num_src + 1}, DType::kI64));
  FS_ASSIGN_OR_RETURN(Tensor indptr, Tensor::EmptyOn(dev, {num_src + 1}, DType::kI64));
  FS_RETURN_IF_ERROR(CudaCheck("cudaMemsetAsync", cudaMemsetAsync(counts.raw_data(), 0, (num_src + 1) * 8, s)));
  GroupCountsKernel<<<Blocks(seg.num_groups, kThreads), kThreads, 0, s>>>(
      seg.starts.data<int64_t>(), seg.group_key.data<int64_t>(), seg.num_groups, counts.data<int64_t>());
  FS_RETURN_IF_ERROR(LaunchCheck("GroupCountsKernel"));
  size_t bytes = 0;
  const int items = static_cast<int>(num_src + 1);
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceScan::InclusiveSum",
                               cub::DeviceScan::InclusiveSum(nullptr, bytes, counts.data<int64_t>(),
                                                             indptr.data<int64_t>(), items, s)));
  FS_ASSIGN_OR_RETURN(Tensor tmp, Scratch(dev, static_cast<int64_t>(bytes), DType::kU8));
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceScan::InclusiveSum",
                               cub::DeviceScan::InclusiveSum(tmp.raw_data(), bytes, counts.data<int64_t>(),
                                                             indptr.data<int64_t>(), items, s)));

  FS_ASSIGN_OR_RETURN(Tensor indices, Tensor::EmptyOn(dev, {n}, csr.indices.dtype()));
  FS_ASSIGN_OR_RETURN(Tensor perm, Tensor::EmptyOn(dev, {n}, DType::kI64));
  Tensor weight;
  if (csr.edge_weight.defined()) {
    FS_ASSIGN_OR_RETURN(weight, Tensor::EmptyOn(dev, {n}, DType::kF32));
  }
  if (n > 0) {
    FS_RETURN_IF_ERROR(CudaCheck("cudaMemcpyAsync", cudaMemcpyAsync(perm.raw_data(), seg.order.raw_data(), n * 8,
                                                                    cudaMemcpyDeviceToDevice, s)));
    WithIndex(csr.indices.dtype(), [&](auto tag) {
      using I = decltype(tag);
      TransposedKernel<I><<<Blocks(n, kThreads), kThreads, 0, s>>>(
          csr.indptr.data<int64_t>(), num_dst, perm.data<int64_t>(),
          csr.edge_weight.defined() ? csr.edge_weight.data<float>() : nullptr, n, indices.data<I>(),
          weight.defined() ? weight.data<float>() : nullptr);
    });
    FS_RETURN_IF_ERROR(LaunchCheck("TransposedKernel"));
  }
  FS_RETURN_IF_ERROR(Sync(s));
  out->indptr = indptr;
  out->indices = indices;
  out->num_src = num_dst;
  out->edge_weight = weight;
  if (edge_perm != nullptr) *edge_perm = perm;
  return Status::OK();
}

}  // namespace foresight::kernels::cuda
