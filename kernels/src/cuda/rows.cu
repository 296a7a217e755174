// Row gather and deterministic row scatter-add on CUDA. IndexAddRows
// groups the rows by destination with a stable sort (GroupByKey), then one
// thread per (destination, column) adds its sources in ascending position
// onto the existing value: the CPU's serial order, so its bits, with no
// float atomics.
#include <string>

#include "cuda_ops.h"
#include "cuda_util.cuh"

namespace foresight::kernels::cuda {

namespace {

template <typename I>
__global__ void RangeKernel(const I* ids, int64_t n, int64_t rows, int64_t* first_bad) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int64_t v = static_cast<int64_t>(ids[i]);
  if (v < 0 || v >= rows) FlagFirst(first_bad, i);
}

// The CPU's message for the first id outside [0, rows).
Status CheckIdRange(const char* op, cudaStream_t s, const Tensor& ids, int64_t rows) {
  const int64_t n = ids.size(0);
  if (n == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(Tensor first_bad, NoErrorYet(ids.device(), s));
  WithIndex(ids.dtype(), [&](auto tag) {
    using I = decltype(tag);
    RangeKernel<I><<<Blocks(n, kThreads), kThreads, 0, s>>>(ids.data<I>(), n, rows, first_bad.data<int64_t>());
  });
  FS_RETURN_IF_ERROR(LaunchCheck("RangeKernel"));
  FS_ASSIGN_OR_RETURN(int64_t bad, ReadBack(first_bad.data<int64_t>(), s));
  if (bad == INT64_MAX) return Status::OK();
  FS_ASSIGN_OR_RETURN(int64_t v, ReadIndex(ids, bad, s));
  return OutOfRange(std::string(op) + ": ids[" + std::to_string(bad) + "] = " + std::to_string(v) +
                    " is out of range [0, " + std::to_string(rows) + ")");
}

__device__ inline float ToF32(Half v) { return HalfToFloat(v.bits); }
__device__ inline float ToF32(BFloat16 v) { return BFloat16ToFloat(v.bits); }

template <typename I, typename S, typename O>
__global__ void GatherKernel(const S* src, const I* ids, int64_t n, int64_t row, O* out) {
  const int64_t total = n * row;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = t / row, j = t % row;
    const S v = src[static_cast<int64_t>(ids[r]) * row + j];
    if constexpr (sizeof(O) == sizeof(S)) {
      out[t] = v;  // same dtype: a copy
    } else {
      out[t] = ToF32(v);
    }
  }
}

template <typename I>
__global__ void KeysKernel(const I* ids, int64_t n, int64_t* keys) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) keys[i] = static_cast<int64_t>(ids[i]);
}

__global__ void IndexAddKernel(const float* src, const int64_t* order, const int64_t* starts, const int64_t* key,
                               int64_t groups, int64_t row, float* dst) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= groups * row) return;
  const int64_t g = t / row, j = t % row;
  float* d = dst + key[g] * row + j;
  float acc = *d;
  for (int64_t k = starts[g]; k < starts[g + 1]; ++k) acc = __fadd_rn(acc, src[order[k] * row + j]);
  *d = acc;
}

}  // namespace

Status GatherRows(const ExecContext& ctx, const Tensor& src, const Tensor& ids, Tensor* out) {
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, src.device()));
  FS_RETURN_IF_ERROR(CheckIdRange("GatherRows", s, ids, src.size(0)));
  const int64_t n = ids.size(0);
  const int64_t row = n > 0 ? out->numel() / n : 0;
  if (n == 0 || row == 0) return Status::OK();
  const unsigned grid = std::min<unsigned>(Blocks(n * row, kThreads), 65535u * 16u);
  WithIndex(ids.dtype(), [&](auto tag) {
    using I = decltype(tag);
    const I* pid = ids.data<I>();
    if (src.dtype() == DType::kF32) {
      GatherKernel<<<grid, kThreads, 0, s>>>(src.data<float>(), pid, n, row, out->data<float>());
    } else if (src.dtype() == DType::kF16) {
      if (out->dtype() == DType::kF16) {
        GatherKernel<<<grid, kThreads, 0, s>>>(src.data<Half>(), pid, n, row, out->data<Half>());
      } else {
        GatherKernel<<<grid, kThreads, 0, s>>>(src.data<Half>(), pid, n, row, out->data<float>());
      }
    } else if (out->dtype() == DType::kBF16) {
      GatherKernel<<<grid, kThreads, 0, s>>>(src.data<BFloat16>(), pid, n, row, out->data<BFloat16>());
    } else {
      GatherKernel<<<grid, kThreads, 0, s>>>(src.data<BFloat16>(), pid, n, row, out->data<float>());
    }
  });
  return LaunchCheck("GatherKernel");
}

Status IndexAddRows(const ExecContext& ctx, const Tensor& src, const Tensor& ids, Tensor* dst) {
  const Device dev = src.device();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, dev));
  FS_RETURN_IF_ERROR(CheckIdRange("IndexAddRows", s, ids, dst->size(0)));
  const int64_t n = ids.size(0);
  const int64_t row = n > 0 ? src.numel() / n : 0;
  if (n == 0 || row == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(Tensor keys, Scratch(dev, n, DType::kI64));
  WithIndex(ids.dtype(), [&](auto tag) {
    using I = decltype(tag);
    KeysKernel<I><<<Blocks(n, kThreads), kThreads, 0, s>>>(ids.data<I>(), n, keys.data<int64_t>());
  });
  FS_RETURN_IF_ERROR(LaunchCheck("KeysKernel"));
  FS_ASSIGN_OR_RETURN(Segments seg, GroupByKey(dev, s, keys, n, BitsFor(dst->size(0)), -1));
  IndexAddKernel<<<Blocks(seg.num_groups * row, kThreads), kThreads, 0, s>>>(
      src.data<float>(), seg.order.data<int64_t>(), seg.starts.data<int64_t>(), seg.group_key.data<int64_t>(),
      seg.num_groups, row, dst->data<float>());
  FS_RETURN_IF_ERROR(LaunchCheck("IndexAddKernel"));
  return Sync(s);
}

}  // namespace foresight::kernels::cuda
