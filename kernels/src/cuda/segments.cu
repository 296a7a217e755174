// GroupByKey (cuda_util.cuh): the stable sort-and-segment step behind the
// deterministic scatters (IndexAddRows, max-SpMM backward, TransposeCsr).
// A stable radix sort keeps equal keys in ascending position, so reducing
// each segment in order adds exactly as the CPU's serial loop does,
// without float atomics.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "cuda_util.cuh"

namespace foresight::kernels::cuda {

namespace {

__global__ void IotaKernel(int64_t* v, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) v[i] = i;
}

// head[i] = 1 where a group starts; *n_valid = the first position of the
// skipped keys (sorted last), left at n when there are none.
__global__ void HeadsKernel(const unsigned long long* keys, int64_t n, unsigned long long skip, int32_t* head,
                            int64_t* n_valid) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const bool first_of_key = i == 0 || keys[i] != keys[i - 1];
  head[i] = first_of_key && keys[i] != skip ? 1 : 0;
  if (first_of_key && keys[i] == skip) *n_valid = i;
}

__global__ void StartsKernel(const int32_t* head, const int32_t* group, const unsigned long long* keys, int64_t n,
                             int64_t* starts, unsigned long long* group_key) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n && head[i]) {
    starts[group[i]] = i;
    group_key[group[i]] = keys[i];
  }
}

}  // namespace

StatusOr<Segments> GroupByKey(Device device, cudaStream_t s, const Tensor& keys, int64_t n, int key_bits,
                              int64_t skip_key) {
  if (n > INT32_MAX) {
    return InvalidArgument("CUDA grouping of " + std::to_string(n) + " items exceeds the 2^31 - 1 the sort takes");
  }
  Segments seg;
  FS_ASSIGN_OR_RETURN(seg.order, Scratch(device, n, DType::kI64));
  if (n == 0) {
    FS_ASSIGN_OR_RETURN(seg.starts, Scratch(device, 1, DType::kI64));
    FS_ASSIGN_OR_RETURN(seg.group_key, Scratch(device, 1, DType::kI64));
    FS_RETURN_IF_ERROR(CudaCheck("cudaMemsetAsync", cudaMemsetAsync(seg.starts.raw_data(), 0, 8, s)));
    return seg;
  }
  FS_ASSIGN_OR_RETURN(Tensor positions, Scratch(device, n, DType::kI64));
  FS_ASSIGN_OR_RETURN(Tensor sorted, Scratch(device, n, DType::kI64));
  IotaKernel<<<Blocks(n, kThreads), kThreads, 0, s>>>(positions.data<int64_t>(), n);
  FS_RETURN_IF_ERROR(LaunchCheck("IotaKernel"));
  const auto* k_in = static_cast<const unsigned long long*>(keys.raw_data());
  auto* k_out = static_cast<unsigned long long*>(sorted.raw_data());
  const int ni = static_cast<int>(n);
  size_t bytes = 0;
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceRadixSort::SortPairs",
                               cub::DeviceRadixSort::SortPairs(nullptr, bytes, k_in, k_out,
                                                               positions.data<int64_t>(), seg.order.data<int64_t>(),
                                                               ni, 0, key_bits, s)));
  FS_ASSIGN_OR_RETURN(Tensor tmp, Scratch(device, static_cast<int64_t>(bytes), DType::kU8));
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceRadixSort::SortPairs",
                               cub::DeviceRadixSort::SortPairs(tmp.raw_data(), bytes, k_in, k_out,
                                                               positions.data<int64_t>(), seg.order.data<int64_t>(),
                                                               ni, 0, key_bits, s)));
  FS_ASSIGN_OR_RETURN(Tensor head, Scratch(device, n, DType::kI32));
  FS_ASSIGN_OR_RETURN(Tensor group, Scratch(device, n, DType::kI32));
  FS_ASSIGN_OR_RETURN(Tensor n_valid, Scratch(device, 1, DType::kI64));
  FS_RETURN_IF_ERROR(CudaCheck("cudaMemcpyAsync", cudaMemcpyAsync(n_valid.raw_data(), &n, sizeof(n),
                                                                  cudaMemcpyHostToDevice, s)));
  const unsigned long long skip = skip_key >= 0 ? static_cast<unsigned long long>(skip_key) : ~0ull;
  HeadsKernel<<<Blocks(n, kThreads), kThreads, 0, s>>>(k_out, n, skip, head.data<int32_t>(),
                                                      n_valid.data<int64_t>());
  FS_RETURN_IF_ERROR(LaunchCheck("HeadsKernel"));
  size_t scan_bytes = 0;
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceScan::ExclusiveSum",
                               cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, head.data<int32_t>(),
                                                             group.data<int32_t>(), ni, s)));
  FS_ASSIGN_OR_RETURN(Tensor scan_tmp, Scratch(device, static_cast<int64_t>(scan_bytes), DType::kU8));
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceScan::ExclusiveSum",
                               cub::DeviceScan::ExclusiveSum(scan_tmp.raw_data(), scan_bytes, head.data<int32_t>(),
                                                             group.data<int32_t>(), ni, s)));
  FS_ASSIGN_OR_RETURN(int32_t last_group, ReadBack(group.data<int32_t>() + (n - 1), s));
  FS_ASSIGN_OR_RETURN(int32_t last_head, ReadBack(head.data<int32_t>() + (n - 1), s));
  FS_ASSIGN_OR_RETURN(int64_t valid, ReadBack(n_valid.data<int64_t>(), s));
  seg.num_groups = static_cast<int64_t>(last_group) + last_head;
  FS_ASSIGN_OR_RETURN(seg.starts, Scratch(device, seg.num_groups + 1, DType::kI64));
  FS_ASSIGN_OR_RETURN(seg.group_key, Scratch(device, seg.num_groups, DType::kI64));
  StartsKernel<<<Blocks(n, kThreads), kThreads, 0, s>>>(head.data<int32_t>(), group.data<int32_t>(), k_out, n,
                                                       seg.starts.data<int64_t>(),
                                                       static_cast<unsigned long long*>(seg.group_key.raw_data()));
  FS_RETURN_IF_ERROR(LaunchCheck("StartsKernel"));
  FS_RETURN_IF_ERROR(CudaCheck("cudaMemcpyAsync",
                               cudaMemcpyAsync(seg.starts.data<int64_t>() + seg.num_groups, &valid, sizeof(valid),
                                               cudaMemcpyHostToDevice, s)));
  // The scratch above (sorted keys, flags) goes back to the cache here.
  FS_RETURN_IF_ERROR(Sync(s));
  return seg;
}

}  // namespace foresight::kernels::cuda
