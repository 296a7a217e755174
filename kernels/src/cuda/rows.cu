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

// The CPU's message for the first id outside [0, rows), read back from the
// device's record of its position (INT64_MAX: none).
Status ReportIdRange(const char* op, cudaStream_t s, const Tensor& ids, const int64_t* first_bad, int64_t rows) {
  FS_ASSIGN_OR_RETURN(const int64_t bad, ReadBack(first_bad, s));
  if (bad == INT64_MAX) return Status::OK();
  FS_ASSIGN_OR_RETURN(const int64_t v, ReadIndex(ids, bad, s));
  return OutOfRange(std::string(op) + ": ids[" + std::to_string(bad) + "] = " + std::to_string(v) +
                    " is out of range [0, " + std::to_string(rows) + ")");
}

// Checks every id before an op that must not start on a bad one.
Status CheckIdRange(const char* op, cudaStream_t s, const Tensor& ids, int64_t rows) {
  const int64_t n = ids.size(0);
  if (n == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(Tensor first_bad, NoErrorYet(ids.device(), s));
  WithIndex(ids.dtype(), [&](auto tag) {
    using I = decltype(tag);
    RangeKernel<I><<<Blocks(n, kThreads), kThreads, 0, s>>>(ids.data<I>(), n, rows, first_bad.data<int64_t>());
  });
  FS_RETURN_IF_ERROR(LaunchCheck("RangeKernel"));
  return ReportIdRange(op, s, ids, first_bad.data<int64_t>(), rows);
}

__device__ inline float Widen(Half v) { return HalfToFloat(v.bits); }
__device__ inline float Widen(BFloat16 v) { return BFloat16ToFloat(v.bits); }
template <typename T>
__device__ inline T Widen(T v) {
  return v;  // same type: a copy
}

// out[r] = src[ids[r]] for rows of `units` S values each (S a 2/4/8/16-byte
// word where the dtypes match, so a 128-float row is one 16-byte load per
// lane of a warp), 2^lanes_log2 threads a row and no division in the loop.
// An id outside [0, rows) has its position flagged (the smallest wins) and
// its row skipped: the op reports it after one read back.
template <typename I, typename S, typename O>
__global__ void GatherKernel(const S* src, const I* ids, int64_t n, int64_t units, int64_t rows, int lanes_log2,
                             O* out, int64_t* first_bad) {
  const int lanes = 1 << lanes_log2;
  const int lane = threadIdx.x & (lanes - 1);
  const int64_t step = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> lanes_log2;
  for (int64_t r = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) >> lanes_log2; r < n; r += step) {
    const int64_t id = static_cast<int64_t>(ids[r]);
    if (id < 0 || id >= rows) {
      if (lane == 0) FlagFirst(first_bad, r);
      continue;
    }
    const S* from = src + id * units;
    O* to = out + r * units;
    for (int64_t c = lane; c < units; c += lanes) to[c] = Widen(from[c]);
  }
}

// The widest word (16, 8, 4 or 2 bytes) dividing the row and both bases.
int WordBytes(int64_t row_bytes, const void* a, const void* b) {
  const auto bits = reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b);
  for (int w : {16, 8, 4}) {
    if (row_bytes % w == 0 && bits % w == 0) return w;
  }
  return 2;
}

// Threads a row: the smallest power of two >= units, at most a warp.
int LanesLog2(int64_t units) {
  int l = 0;
  while (l < 5 && (int64_t{1} << l) < units) ++l;
  return l;
}

template <typename I, typename S, typename O>
Status LaunchGather(cudaStream_t s, const void* src, const I* ids, int64_t n, int64_t units, int64_t rows,
                    void* out, int64_t* first_bad) {
  const int l2 = LanesLog2(units);
  const unsigned grid = std::min<unsigned>(Blocks(n << l2, kThreads), 65535u * 16u);
  GatherKernel<I, S, O><<<grid, kThreads, 0, s>>>(static_cast<const S*>(src), ids, n, units, rows, l2,
                                                  static_cast<O*>(out), first_bad);
  return LaunchCheck("GatherKernel");
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
  const int64_t n = ids.size(0), rows = src.size(0);
  const int64_t row = n > 0 ? out->numel() / n : 0;
  if (n == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(Tensor first_bad, NoErrorYet(ids.device(), s));
  int64_t* bad = first_bad.data<int64_t>();
  FS_RETURN_IF_ERROR(WithIndex(ids.dtype(), [&](auto tag) -> Status {
    using I = decltype(tag);
    const I* pid = ids.data<I>();
    if (row == 0) {
      return LaunchGather<I, float, float>(s, src.raw_data(), pid, n, 0, rows, out->raw_data(), bad);
    }
    if (src.dtype() == out->dtype()) {  // a copy: move whole words
      const int64_t row_bytes = row * static_cast<int64_t>(src.element_size());
      auto words = [&](auto word) {
        using W = decltype(word);
        return LaunchGather<I, W, W>(s, src.raw_data(), pid, n, row_bytes / static_cast<int64_t>(sizeof(W)), rows,
                                     out->raw_data(), bad);
      };
      switch (WordBytes(row_bytes, src.raw_data(), out->raw_data())) {
        case 16: return words(uint4{});
        case 8: return words(uint2{});
        case 4: return words(uint32_t{});
        default: return words(uint16_t{});
      }
    }
    if (src.dtype() == DType::kF16) {  // widened to f32
      return LaunchGather<I, Half, float>(s, src.raw_data(), pid, n, row, rows, out->raw_data(), bad);
    }
    return LaunchGather<I, BFloat16, float>(s, src.raw_data(), pid, n, row, rows, out->raw_data(), bad);
  }));
  return ReportIdRange("GatherRows", s, ids, bad, rows);
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
