// Helpers shared by the CUDA ops (kernels/src/cuda/*.cu): Status from CUDA
// errors, the context's stream, launch sizes, device scratch tensors, the
// device-side error record, small host<->device reads, and the stable
// sort-and-segment step the deterministic backward passes share.
//
// Rounding: the build compiles these files with --fmad=false and IEEE
// division and square root, so a kernel that adds and multiplies in the
// CPU reference's order gets its bits; transcendental functions (exp, log,
// expm1) differ from glibc's by an ulp or so and are tested with a
// tolerance.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "foresight/core/context.h"
#include "foresight/core/cuda_streams.h"
#include "foresight/core/tensor.h"

namespace foresight::kernels::cuda {

inline Status CudaCheck(const char* what, cudaError_t err) {
  if (err == cudaSuccess) return Status::OK();
  return Internal(std::string(what) + " failed: " + cudaGetErrorString(err));
}
inline Status LaunchCheck(const char* kernel) { return CudaCheck(kernel, cudaGetLastError()); }

// The stream of ctx.stream_slot on `device` (the GPU holding the operands),
// with that GPU made current.
inline StatusOr<cudaStream_t> StreamOf(const ExecContext& ctx, Device device) {
  FS_RETURN_IF_ERROR(CudaCheck("cudaSetDevice", cudaSetDevice(device.index)));
  FS_ASSIGN_OR_RETURN(void* s, CudaStreamFor(device, ctx.stream_slot));
  return static_cast<cudaStream_t>(s);
}

inline Status Sync(cudaStream_t s) { return CudaCheck("cudaStreamSynchronize", cudaStreamSynchronize(s)); }

constexpr int kThreads = 256;
constexpr int kWarpSize = 32;

// Blocks of `per` items covering n (at least one, so a launch is valid).
inline unsigned Blocks(int64_t n, int64_t per) {
  return static_cast<unsigned>(std::max<int64_t>(1, (n + per - 1) / per));
}

// A contiguous scratch tensor of n elements (at least one) on `device`.
// Freeing it while kernels still use it is safe (the device cache reuses a
// block only after events recorded at its free on every stream slot have
// passed); the ops that sort still synchronize before returning, so their
// results are complete on return, as the CPU's are.
inline StatusOr<Tensor> Scratch(Device device, int64_t n, DType dtype) {
  return Tensor::EmptyOn(device, {std::max<int64_t>(n, 1)}, dtype);
}

// Reads one value of type T at `p` (device memory) back to the host.
template <typename T>
StatusOr<T> ReadBack(const T* p, cudaStream_t s) {
  T v{};
  FS_RETURN_IF_ERROR(CudaCheck("cudaMemcpyAsync", cudaMemcpyAsync(&v, p, sizeof(T), cudaMemcpyDeviceToHost, s)));
  FS_RETURN_IF_ERROR(Sync(s));
  return v;
}

// Reads element i of an i32 or i64 tensor on the device as int64.
inline StatusOr<int64_t> ReadIndex(const Tensor& t, int64_t i, cudaStream_t s) {
  if (t.dtype() == DType::kI32) {
    FS_ASSIGN_OR_RETURN(int32_t v, ReadBack(t.data<int32_t>() + i, s));
    return static_cast<int64_t>(v);
  }
  return ReadBack(t.data<int64_t>() + i, s);
}

// *p = v on the device (a template, so each .cu file gets its own copy
// without relocatable device code).
template <typename T>
__global__ void SetValueKernel(T* p, T v) {
  *p = v;
}

// A device int64 initialised to INT64_MAX: kernels atomicMin the first bad
// position into it (integer atomics: the smallest wins in any order). The
// fill is a one-thread kernel queued on s, so asking costs no host wait.
inline StatusOr<Tensor> NoErrorYet(Device device, cudaStream_t s) {
  FS_ASSIGN_OR_RETURN(Tensor t, Scratch(device, 1, DType::kI64));
  SetValueKernel<int64_t><<<1, 1, 0, s>>>(t.data<int64_t>(), INT64_MAX);
  FS_RETURN_IF_ERROR(LaunchCheck("SetValueKernel"));
  return t;
}

__device__ inline void FlagFirst(int64_t* first, int64_t pos) {
  atomicMin(reinterpret_cast<unsigned long long*>(first), static_cast<unsigned long long>(pos));
}

// Calls fn(I{}) with I = int32_t or int64_t (the dispatchers checked it is one).
template <typename Fn>
auto WithIndex(DType t, Fn&& fn) {
  if (t == DType::kI32) return fn(int32_t{});
  return fn(int64_t{});
}

// The destination row of edge e: the last v with indptr[v] <= e among rows
// [0, num_dst) (rows may be empty).
__device__ inline int64_t RowOfEdge(const int64_t* indptr, int64_t num_dst, int64_t e) {
  int64_t lo = 0, hi = num_dst;  // answer in [lo, hi)
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (indptr[mid] <= e) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Items grouped by key, in ascending (key, position) order: what a
// serial loop over positions adding into key's slot sees for each key.
// order[i]: the position of the i-th item; starts[g], g < num_groups: the
// first index i of group g, and starts[num_groups] = n; group_key[g]: its key.
struct Segments {
  Tensor order;      // i64 [n]
  Tensor starts;     // i64 [num_groups + 1]
  Tensor group_key;  // u64 (as i64) [num_groups]
  int64_t num_groups = 0;
};
// `keys` (u64 as i64 [n], each below 2^key_bits) on `device`: a stable
// radix sort of (key, position), segment heads by a flag scan. Keys equal
// to `skip_key` (>= 0) form no group (the caller's "no destination").
StatusOr<Segments> GroupByKey(Device device, cudaStream_t s, const Tensor& keys, int64_t n, int key_bits,
                              int64_t skip_key);

// Bits needed for values below n (at least 1).
inline int BitsFor(int64_t n) {
  int b = 1;
  while (b < 63 && (int64_t{1} << b) < n) ++b;
  return b;
}

}  // namespace foresight::kernels::cuda
