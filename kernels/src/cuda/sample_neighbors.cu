// Uniform neighbour sampling on CUDA with the CPU's draws (floyd.h): for a
// seed s of degree d (or c allowed neighbours under a source mask) and
// k = min(fanout, d) draws, draw j takes t = key.PairedBelow(n - k + j + 1,
// s, j) over n = d (or c) positions, or n - k + j when t was already
// drawn; k == n takes the whole row (the allowed part) in CSR order. The
// RNG is core/rng.h's host-and-device Philox, so the sample of (key, s) is
// the CPU's, entry for entry and in the same order.
//
// Three passes: a count per seed (validating the seed and, with a mask,
// its row's indices, as the CPU does), a scan for out_indptr, then one
// warp per seed drawing its positions one after the other (the warp tests
// each draw against the earlier ones in parallel) and mapping them to
// neighbour ids. The graph, seeds and mask live on the GPU; the outputs
// are allocated there.
#include <cub/device/device_scan.cuh>

#include <string>

#include "cuda_ops.h"
#include "cuda_util.cuh"
#include "foresight/core/rng.h"

namespace foresight::kernels::cuda {

namespace {

constexpr int kSeedsPerBlock = kThreads / kWarpSize;

__device__ inline int64_t SampleCount(int64_t fanout, int64_t degree) {
  return (fanout < 0 || fanout >= degree) ? degree : fanout;
}

// counts[i + 1] = seed i's draws; a bad seed (out of range, a decreasing
// indptr, or with a mask an index outside [0, num_src) in its row) counts
// 0 and is flagged.
template <typename IdxT, typename SeedT>
__global__ void CountKernel(const int64_t* ip, const IdxT* idx, int64_t num_dst, int64_t num_src, const SeedT* seeds,
                            int64_t num_seeds, int64_t fanout, const uint8_t* mask, int64_t* counts,
                            int64_t* first_bad) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= num_seeds) return;
  counts[i + 1] = 0;
  const int64_t s = static_cast<int64_t>(seeds[i]);
  if (s < 0 || s >= num_dst || ip[s + 1] < ip[s]) {
    FlagFirst(first_bad, i);
    return;
  }
  int64_t n = ip[s + 1] - ip[s];
  if (mask != nullptr) {
    int64_t allowed = 0;
    for (int64_t e = ip[s]; e < ip[s + 1]; ++e) {
      const int64_t u = static_cast<int64_t>(idx[e]);
      if (u < 0 || u >= num_src) {
        FlagFirst(first_bad, i);
        return;
      }
      allowed += mask[u] != 0;
    }
    n = allowed;
  }
  counts[i + 1] = SampleCount(fanout, n);
}

// The allowed neighbour of rank t in row [e0, e1) (t < the allowed count).
template <typename IdxT>
__device__ inline int64_t NthAllowed(const IdxT* idx, int64_t e0, int64_t e1, const uint8_t* mask, int64_t t) {
  for (int64_t e = e0; e < e1; ++e) {
    const int64_t u = static_cast<int64_t>(idx[e]);
    if (mask[u] != 0) {
      if (t == 0) return u;
      --t;
    }
  }
  return -1;  // unreachable for a valid rank
}

// One warp per seed.
template <typename IdxT, typename SeedT>
__global__ void FillKernel(const int64_t* ip, const IdxT* idx, const SeedT* seeds, int64_t num_seeds, int64_t fanout,
                           RngKey key, const uint8_t* mask, const int64_t* out_ptr, int64_t* out) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(kSeedsPerBlock) + threadIdx.y;
  if (i >= num_seeds) return;
  const int lane = threadIdx.x;
  const int64_t base = out_ptr[i], k = out_ptr[i + 1] - base;
  if (k == 0) return;
  const int64_t s = static_cast<int64_t>(seeds[i]);
  const int64_t e0 = ip[s], e1 = ip[s + 1];
  int64_t* dst = out + base;
  // n: the positions drawn over (the row, or its allowed neighbours).
  int64_t n = e1 - e0;
  if (mask != nullptr) {
    int64_t allowed = 0;
    for (int64_t e0w = e0; e0w < e1; e0w += kWarpSize) {
      const int64_t e = e0w + lane;
      const bool ok = e < e1 && mask[static_cast<int64_t>(idx[e])] != 0;
      allowed += __popc(__ballot_sync(0xffffffffu, ok));
    }
    n = allowed;
  }
  if (k == n) {  // every (allowed) neighbour, in CSR order
    int64_t written = 0;
    for (int64_t e0w = e0; e0w < e1; e0w += kWarpSize) {
      const int64_t e = e0w + lane;
      const int64_t u = e < e1 ? static_cast<int64_t>(idx[e]) : -1;
      const bool ok = e < e1 && (mask == nullptr || mask[u] != 0);
      const unsigned bits = __ballot_sync(0xffffffffu, ok);
      if (ok) dst[written + __popc(bits & ((1u << lane) - 1u))] = u;
      written += __popc(bits);
    }
    return;
  }
  // Floyd: positions first, in draw order.
  const int64_t first = n - k;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t m = first + j;  // draw from [0, m]
    int64_t t = static_cast<int64_t>(key.PairedBelow(static_cast<uint64_t>(m + 1), static_cast<uint64_t>(s),
                                                     static_cast<uint64_t>(j)));
    bool taken = false;
    for (int64_t q = lane; q < j; q += kWarpSize) taken |= dst[q] == t;
    if (__any_sync(0xffffffffu, taken)) t = m;  // m is new: earlier draws were all < m
    if (lane == 0) dst[j] = t;
    __syncwarp();
  }
  for (int64_t j = lane; j < k; j += kWarpSize) {
    const int64_t t = dst[j];
    dst[j] = mask == nullptr ? static_cast<int64_t>(idx[e0 + t]) : NthAllowed(idx, e0, e1, mask, t);
  }
}

template <typename IdxT>
__global__ void RowRangeKernel(const IdxT* idx, int64_t e0, int64_t e1, int64_t num_src, int64_t* first_bad) {
  const int64_t e = e0 + blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (e >= e1) return;
  const int64_t u = static_cast<int64_t>(idx[e]);
  if (u < 0 || u >= num_src) FlagFirst(first_bad, e);
}

// The CPU's error for seeds[i] (cpu/sample_neighbors.cc: BadSeedError).
template <typename IdxT>
Status BadSeedError(const Csr& graph, const Tensor& seeds, int64_t i, cudaStream_t st) {
  FS_ASSIGN_OR_RETURN(const int64_t s, ReadIndex(seeds, i, st));
  if (s < 0 || s >= graph.num_dst()) {
    return OutOfRange("SampleNeighbors: seeds[" + std::to_string(i) + "] = " + std::to_string(s) +
                      " is out of range [0, " + std::to_string(graph.num_dst()) + ")");
  }
  const int64_t* ip = graph.indptr.data<int64_t>();
  FS_ASSIGN_OR_RETURN(const int64_t a, ReadBack(ip + s, st));
  FS_ASSIGN_OR_RETURN(const int64_t b, ReadBack(ip + s + 1, st));
  if (b < a) {
    return InvalidArgument("SampleNeighbors: graph.indptr decreases at row " + std::to_string(s) + " (indptr[" +
                           std::to_string(s) + "] = " + std::to_string(a) + " > indptr[" + std::to_string(s + 1) +
                           "] = " + std::to_string(b) + ")");
  }
  if (b > a) {
    FS_ASSIGN_OR_RETURN(Tensor bad, NoErrorYet(graph.device(), st));
    RowRangeKernel<IdxT><<<Blocks(b - a, kThreads), kThreads, 0, st>>>(graph.indices.data<IdxT>(), a, b,
                                                                      graph.num_src, bad.data<int64_t>());
    FS_RETURN_IF_ERROR(LaunchCheck("RowRangeKernel"));
    FS_ASSIGN_OR_RETURN(const int64_t pos, ReadBack(bad.data<int64_t>(), st));
    if (pos != INT64_MAX) {
      FS_ASSIGN_OR_RETURN(const int64_t u, ReadIndex(graph.indices, pos, st));
      return OutOfRange("SampleNeighbors: graph.indices[" + std::to_string(pos) + "] = " + std::to_string(u) +
                        " (row " + std::to_string(s) + ") is out of range [0, " + std::to_string(graph.num_src) +
                        ")");
    }
  }
  return Internal("SampleNeighbors: seeds[" + std::to_string(i) + "] was flagged as bad but is valid");
}

template <typename IdxT, typename SeedT>
Status Sample(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout, RngKey key,
              const uint8_t* mask, Tensor* out_indptr, Tensor* out_neighbors) {
  const Device dev = graph.device();
  FS_ASSIGN_OR_RETURN(cudaStream_t st, StreamOf(ctx, dev));
  const int64_t num_seeds = seeds.size(0);
  const int64_t* ip = graph.indptr.data<int64_t>();
  const IdxT* idx = graph.indices.data<IdxT>();
  const SeedT* sd = seeds.data<SeedT>();
  FS_ASSIGN_OR_RETURN(Tensor counts, Tensor::EmptyOn(dev, {num_seeds + 1}, DType::kI64));
  FS_ASSIGN_OR_RETURN(Tensor optr, Tensor::EmptyOn(dev, {num_seeds + 1}, DType::kI64));
  FS_ASSIGN_OR_RETURN(Tensor bad, NoErrorYet(dev, st));
  FS_RETURN_IF_ERROR(CudaCheck("cudaMemsetAsync", cudaMemsetAsync(counts.raw_data(), 0, 8, st)));
  if (num_seeds > 0) {
    CountKernel<IdxT, SeedT><<<Blocks(num_seeds, kThreads), kThreads, 0, st>>>(
        ip, idx, graph.num_dst(), graph.num_src, sd, num_seeds, fanout, mask, counts.data<int64_t>(),
        bad.data<int64_t>());
    FS_RETURN_IF_ERROR(LaunchCheck("CountKernel"));
  }
  FS_ASSIGN_OR_RETURN(const int64_t first_bad, ReadBack(bad.data<int64_t>(), st));
  if (first_bad != INT64_MAX) return BadSeedError<IdxT>(graph, seeds, first_bad, st);
  if (num_seeds + 1 > INT32_MAX) {
    return InvalidArgument("SampleNeighbors on cuda: " + std::to_string(num_seeds) +
                           " seeds exceed the scan's 2^31 - 1");
  }
  size_t bytes = 0;
  const int items = static_cast<int>(num_seeds + 1);
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceScan::InclusiveSum",
                               cub::DeviceScan::InclusiveSum(nullptr, bytes, counts.data<int64_t>(),
                                                             optr.data<int64_t>(), items, st)));
  FS_ASSIGN_OR_RETURN(Tensor tmp, Scratch(dev, static_cast<int64_t>(bytes), DType::kU8));
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceScan::InclusiveSum",
                               cub::DeviceScan::InclusiveSum(tmp.raw_data(), bytes, counts.data<int64_t>(),
                                                             optr.data<int64_t>(), items, st)));
  FS_ASSIGN_OR_RETURN(const int64_t total, ReadBack(optr.data<int64_t>() + num_seeds, st));
  FS_ASSIGN_OR_RETURN(Tensor nbrs, Tensor::EmptyOn(dev, {total}, DType::kI64));
  if (total > 0) {
    FillKernel<IdxT, SeedT><<<Blocks(num_seeds, kSeedsPerBlock), dim3(kWarpSize, kSeedsPerBlock), 0, st>>>(
        ip, idx, sd, num_seeds, fanout, key, mask, optr.data<int64_t>(), nbrs.data<int64_t>());
    FS_RETURN_IF_ERROR(LaunchCheck("FillKernel"));
  }
  FS_RETURN_IF_ERROR(Sync(st));
  *out_indptr = optr;
  *out_neighbors = nbrs;
  return Status::OK();
}

}  // namespace

Status SampleNeighbors(const ExecContext& ctx, const Csr& graph, const Tensor& seeds, int64_t fanout,
                       RngKey key, Tensor* out_indptr, Tensor* out_neighbors, const Tensor* source_mask,
                       const SampleSink* sink, const SampledAhead* drawn, SampledAhead* ahead) {
  if (sink != nullptr || drawn != nullptr || ahead != nullptr) {
    return Unimplemented(
        "SampleNeighbors on cuda: sink, drawn and ahead overlap the CPU sampler's relabelling with its draws "
        "and have no CUDA version; pass null (the outputs are then in device memory)");
  }
  const uint8_t* mask = source_mask != nullptr ? source_mask->data<uint8_t>() : nullptr;
  return WithIndex(graph.indices.dtype(), [&](auto itag) {
    using IdxT = decltype(itag);
    return WithIndex(seeds.dtype(), [&](auto stag) {
      using SeedT = decltype(stag);
      return Sample<IdxT, SeedT>(ctx, graph, seeds, fanout, key, mask, out_indptr, out_neighbors);
    });
  });
}

}  // namespace foresight::kernels::cuda
