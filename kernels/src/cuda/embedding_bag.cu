// Embedding bags on CUDA, bit for bit the CPU's results (the build turns
// off FMA contraction for these files). Forward: one warp per bag, lanes
// over the embedding's columns, each column summed in id order. Backward +
// update, deterministic without float atomics: every occurrence keyed by
// its row in `weights`, a stable radix sort (equal rows keep ascending
// position), segment heads by a flag scan, then one warp per distinct row
// sums its gradient in position order and applies the optimizer once.
// Value errors (offsets, ids out of range) are found on the device, flagged
// with integer atomics and reported after one copy back. Everything is
// queued on the stream of ctx.stream_slot (core/cuda_streams.h).
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../check.h"
#include "../embedding_bag_args.h"
#include "../embedding_bag_values.h"
#include "cuda_ops.h"
#include "foresight/core/cuda_streams.h"

namespace foresight::kernels::cuda {

namespace {

constexpr int kWarp = 32;
constexpr int kBagsPerBlock = 4;

Status CudaCheck(const char* what, cudaError_t err) {
  if (err == cudaSuccess) return Status::OK();
  return Internal(std::string(what) + " failed: " + cudaGetErrorString(err));
}
Status LaunchCheck(const char* kernel) { return CudaCheck(kernel, cudaGetLastError()); }

// A small copy on the op's stream, complete on return (the host reads it,
// or its source is on the host's stack).
Status CopyNow(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  FS_RETURN_IF_ERROR(CudaCheck("cudaMemcpyAsync", cudaMemcpyAsync(dst, src, bytes, kind, s)));
  return CudaCheck("cudaStreamSynchronize", cudaStreamSynchronize(s));
}

// Value checks found on the device: the smallest bad position of each kind
// (INT64_MAX when none).
struct DeviceErrors {
  long long bad_offset;  // q with offsets[q+1] < offsets[q] (or the ends wrong)
  long long bad_id;      // id position out of its table's range
  long long bad_table;   // t where table_offsets break (the forward checks them on the device)
};

__global__ void InitErrorsKernel(DeviceErrors* err) { *err = DeviceErrors{INT64_MAX, INT64_MAX, INT64_MAX}; }

// The call's shape and pointers (shared with the CPU) and the host's stream.
struct BagArgs : internal::EmbeddingBagArgs {
  cudaStream_t stream = nullptr;  // ctx.stream_slot's stream (never read on the device)
};

__device__ inline float LoadW(const float* p) { return *p; }
__device__ inline float LoadW(const Half* p) { return HalfToFloat(p->bits); }
__device__ inline void StoreW(float* p, float v) { *p = v; }
__device__ inline void StoreW(Half* p, float v) { p->bits = FloatToHalf(v); }

__global__ void CheckOffsetsKernel(BagArgs a, DeviceErrors* err) {
  const int64_t nb = a.batch * a.tables;
  const int64_t q = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (q > nb) return;
  bool bad = false;
  if (q == 0) bad = a.offsets[0] != 0;
  if (q == nb) bad = a.offsets[nb] != a.num_ids;
  if (q < nb && a.offsets[q + 1] < a.offsets[q]) bad = true;
  if (bad) atomicMin(&err->bad_offset, static_cast<long long>(q));
}

// V consecutive columns of one weights row as floats: a 16-byte load where
// V = 4 (f32 rows whose width and base allow it), else one value.
template <int V>
__device__ inline void LoadColumns(const float* p, float* x) {
  if constexpr (V == 4) {
    const float4 f = *reinterpret_cast<const float4*>(p);
    x[0] = f.x, x[1] = f.y, x[2] = f.z, x[3] = f.w;
  } else {
    x[0] = *p;
  }
}
template <int V>
__device__ inline void LoadColumns(const Half* p, float* x) {
  static_assert(V == 1, "f16 rows load one value a lane");
  x[0] = LoadW(p);
}

// The checks a bag makes before it reads: its offsets (the first bad q wins,
// as CheckOffsetsKernel finds it) and its table's rows inside weights (block 0
// checks the table offsets whole, so a bag whose table is out of bounds only
// stops). False: the bag must not read.
__device__ inline bool BagReadable(const BagArgs& a, int64_t q, int64_t t, DeviceErrors* err) {
  const int64_t nb = a.batch * a.tables;
  const int64_t k0 = a.offsets[q], k1 = a.offsets[q + 1];
  bool ok = true;
  if ((q == 0 && k0 != 0) || k1 < k0) atomicMin(&err->bad_offset, static_cast<long long>(q)), ok = false;
  if (q == nb - 1 && k1 != a.num_ids) atomicMin(&err->bad_offset, static_cast<long long>(nb)), ok = false;
  // Offsets that start at 0, never decrease and end at num_ids stay inside
  // ids, so a bag outside it has its violation flagged by another bag.
  if (k0 < 0 || k1 > a.num_ids) ok = false;
  const int64_t base = a.base(t), limit = a.limit(t);
  return ok && base >= 0 && limit >= 0 && base + limit <= a.rows;
}

// One warp per bag (kBagsPerBlock bags a block), each lane V columns at a
// time, each column summed in id order (the CPU's bits). Offsets, table
// offsets and ids are checked here, on the device, and flagged into `err`,
// so the op waits for the device once, after the kernel.
template <int V, typename W, typename I>
__global__ void ForwardKernel(BagArgs a, const W* weights, const I* ids, float* out, DeviceErrors* err) {
  if (a.table_offsets != nullptr && blockIdx.x == 0 && threadIdx.y == 0) {
    for (int64_t t = threadIdx.x; t <= a.tables; t += kWarp) {
      const int64_t v = a.table_offsets[t];
      if (t == 0 ? v < 0 : (v < a.table_offsets[t - 1] || (t == a.tables && v > a.rows))) {
        atomicMin(&err->bad_table, static_cast<long long>(t));
      }
    }
  }
  const int64_t q = blockIdx.x * static_cast<int64_t>(kBagsPerBlock) + threadIdx.y;
  if (q >= a.batch * a.tables) return;
  const int64_t t = q / a.batch, b = q % a.batch;
  if (!BagReadable(a, q, t, err)) return;
  const int64_t base = a.base(t), limit = a.limit(t);
  const int64_t k0 = a.offsets[q], k1 = a.offsets[q + 1];
  float* o = out + (b * a.tables + t) * a.dim;
  for (int64_t j = threadIdx.x * V; j < a.dim; j += kWarp * V) {
    float acc[V] = {};
    for (int64_t k = k0; k < k1; ++k) {
      const int64_t id = static_cast<int64_t>(ids[k]);
      if (id < 0 || id >= limit) {
        atomicMin(&err->bad_id, static_cast<long long>(k));
        return;
      }
      float x[V];
      LoadColumns<V>(weights + (base + id) * a.row_width + j, x);
      for (int v = 0; v < V; ++v) {
        acc[v] = a.psw != nullptr ? __fadd_rn(acc[v], __fmul_rn(a.psw[k], x[v])) : __fadd_rn(acc[v], x[v]);
      }
    }
    for (int v = 0; v < V; ++v) {
      if (a.mean && k1 > k0) acc[v] = __fdiv_rn(acc[v], static_cast<float>(k1 - k0));
    }
    if constexpr (V == 4) {
      *reinterpret_cast<float4*>(o + j) = make_float4(acc[0], acc[1], acc[2], acc[3]);
    } else {
      o[j] = acc[0];
    }
  }
}

// keys[k] = row of occurrence k in weights; vals[k] = k; bag_of[k] = bag.
template <typename I>
__global__ void KeysKernel(BagArgs a, const I* ids, unsigned long long* keys, int64_t* vals, int64_t* bag_of,
                           DeviceErrors* err) {
  const int64_t q = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (q >= a.batch * a.tables) return;
  const int64_t t = q / a.batch;
  const int64_t base = a.base(t), limit = a.limit(t);
  for (int64_t k = a.offsets[q]; k < a.offsets[q + 1]; ++k) {
    const int64_t id = static_cast<int64_t>(ids[k]);
    if (id < 0 || id >= limit) {
      atomicMin(&err->bad_id, static_cast<long long>(k));
      keys[k] = 0;
    } else {
      keys[k] = static_cast<unsigned long long>(base + id);
    }
    vals[k] = k;
    bag_of[k] = q;
  }
}

__global__ void HeadsKernel(const unsigned long long* keys, int64_t n, int32_t* heads) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) heads[i] = (i == 0 || keys[i] != keys[i - 1]) ? 1 : 0;
}

__global__ void StartsKernel(const int32_t* heads, const int32_t* group, int64_t n, int64_t* starts) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n && heads[i]) starts[group[i]] = i;
  if (i == n - 1) starts[group[i] + heads[i]] = n;
}

struct UpdateArgs {
  int kind;  // SparseOptimizer
  float lr, eps, beta1, beta2, weight_decay, bc1, bc2;
  int64_t state_offset;
};

// One warp (one block) per distinct row; shared memory holds its gradient.
template <typename W>
__global__ void UpdateKernel(BagArgs a, UpdateArgs u, const unsigned long long* rows, const int64_t* positions,
                             const int64_t* bag_of, const int64_t* starts, const float* grad_out, W* weights) {
  extern __shared__ float grad[];
  const int64_t r = blockIdx.x;
  const int64_t s0 = starts[r], s1 = starts[r + 1];
  const int64_t out_width = a.tables * a.dim;
  W* row = weights + static_cast<int64_t>(rows[s0]) * a.row_width;
  for (int64_t j = threadIdx.x; j < a.dim; j += kWarp) {
    // The sum starts from the first occurrence's term (as on the CPU).
    float g = 0.0f;
    for (int64_t i = s0; i < s1; ++i) {
      const int64_t k = positions[i];
      const int64_t q = bag_of[k];
      const int64_t t = q / a.batch, b = q % a.batch;
      const float go = grad_out[b * out_width + t * a.dim + j];
      float term = go;
      if (a.psw != nullptr) {
        term = __fmul_rn(a.psw[k], go);
      } else if (a.mean) {
        term = __fmul_rn(__fdiv_rn(1.0f, static_cast<float>(a.offsets[q + 1] - a.offsets[q])), go);
      }
      g = i == s0 ? term : __fadd_rn(g, term);
    }
    if (u.weight_decay > 0) g = __fadd_rn(g, __fmul_rn(u.weight_decay, LoadW(row + j)));
    grad[j] = g;
  }
  __syncwarp();
  float* state = reinterpret_cast<float*>(row + u.state_offset);
  if (u.kind == static_cast<int>(SparseOptimizer::kRowwiseAdagrad)) {
    if (threadIdx.x == 0) {
      float ss = 0.0f;
      for (int64_t j = 0; j < a.dim; ++j) ss = __fadd_rn(ss, __fmul_rn(grad[j], grad[j]));
      state[0] = __fadd_rn(state[0], __fdiv_rn(ss, static_cast<float>(a.dim)));
    }
    __syncwarp();
  }
  for (int64_t j = threadIdx.x; j < a.dim; j += kWarp) {
    const float g = grad[j];
    float w = LoadW(row + j);
    if (u.kind == static_cast<int>(SparseOptimizer::kSgd)) {
      w = __fsub_rn(w, __fmul_rn(u.lr, g));
    } else if (u.kind == static_cast<int>(SparseOptimizer::kRowwiseAdagrad)) {
      const float denom = __fadd_rn(__fsqrt_rn(state[0]), u.eps);
      w = __fsub_rn(w, __fdiv_rn(__fmul_rn(u.lr, g), denom));
    } else {
      float* m = state;
      float* v = state + a.dim;
      m[j] = __fadd_rn(__fmul_rn(u.beta1, m[j]), __fmul_rn(__fsub_rn(1.0f, u.beta1), g));
      v[j] = __fadd_rn(__fmul_rn(u.beta2, v[j]), __fmul_rn(__fsub_rn(1.0f, u.beta2), __fmul_rn(g, g)));
      const float mhat = __fdiv_rn(m[j], u.bc1);
      const float denom = __fadd_rn(__fsqrt_rn(__fdiv_rn(v[j], u.bc2)), u.eps);
      w = __fsub_rn(w, __fdiv_rn(__fmul_rn(u.lr, mhat), denom));
    }
    StoreW(row + j, w);
  }
}

int64_t Blocks(int64_t n, int64_t per) { return std::max<int64_t>(1, (n + per - 1) / per); }

StatusOr<Tensor> DeviceTensor(Device device, int64_t n, DType dtype) {
  return Tensor::EmptyOn(device, {std::max<int64_t>(n, 1)}, dtype);
}

// The CPU's value checks, in its order (offsets, then table offsets), on
// copies read back to the host; fills `host` with a copy of `a` pointing at
// them (for the bad-id message).
Status HostChecks(const char* op, const BagArgs& a, const Tensor& offsets, const Tensor& table_offsets,
                  std::vector<int64_t>* off, std::vector<int64_t>* to, internal::EmbeddingBagArgs* host) {
  off->resize(static_cast<size_t>(a.num_bags() + 1));
  FS_RETURN_IF_ERROR(
      CopyNow(off->data(), offsets.raw_data(), off->size() * sizeof(int64_t), cudaMemcpyDeviceToHost, a.stream));
  FS_RETURN_IF_ERROR(internal::CheckBagOffsetValues(op, off->data(), a.num_bags(), a.num_ids, nullptr));
  *host = a;
  host->offsets = off->data();
  if (!table_offsets.defined()) return Status::OK();
  to->resize(static_cast<size_t>(a.tables + 1));
  FS_RETURN_IF_ERROR(
      CopyNow(to->data(), table_offsets.raw_data(), to->size() * sizeof(int64_t), cudaMemcpyDeviceToHost, a.stream));
  host->table_offsets = to->data();
  return internal::CheckTableOffsetValues(op, to->data(), a.tables, a.rows);
}

Status HostChecks(const char* op, const BagArgs& a, const Tensor& offsets, const Tensor& table_offsets) {
  std::vector<int64_t> off, to;
  internal::EmbeddingBagArgs host;
  return HostChecks(op, a, offsets, table_offsets, &off, &to, &host);
}

// Copies the device's error record back and, only when it flags an error,
// the offsets too, to report it as the CPU does (its checks, in its order,
// then the first bad id, in its words).
Status ReportErrors(const char* op, const DeviceErrors* d_err, const Tensor& ids, const BagArgs& a,
                    const Tensor& offsets, const Tensor& table_offsets) {
  DeviceErrors err;
  FS_RETURN_IF_ERROR(CopyNow(&err, d_err, sizeof(err), cudaMemcpyDeviceToHost, a.stream));
  if (err.bad_offset == INT64_MAX && err.bad_table == INT64_MAX && err.bad_id == INT64_MAX) return Status::OK();
  std::vector<int64_t> off, to;
  internal::EmbeddingBagArgs host;
  FS_RETURN_IF_ERROR(HostChecks(op, a, offsets, table_offsets, &off, &to, &host));
  if (err.bad_id == INT64_MAX) {
    return Internal(std::string(op) + ": the device flagged offsets or table offsets that the host's checks pass");
  }
  const size_t es = ids.element_size();
  int64_t raw = 0;
  FS_RETURN_IF_ERROR(CopyNow(&raw, static_cast<const char*>(ids.raw_data()) + err.bad_id * es, es,
                             cudaMemcpyDeviceToHost, a.stream));
  const int64_t id = es == 4 ? static_cast<int64_t>(static_cast<int32_t>(raw)) : raw;
  return internal::BadEmbeddingId(op, host, err.bad_id, id);
}

StatusOr<BagArgs> MakeArgs(const ExecContext& ctx, const char* op, const EmbeddingRowLayout& layout,
                           const Tensor& weights, const Tensor& table_offsets, const Tensor& ids,
                           const Tensor& offsets, const Tensor& psw, Pooling pooling, const Tensor& pooled) {
  BagArgs a;
  static_cast<internal::EmbeddingBagArgs&>(a) =
      internal::UnpackEmbeddingBagArgs(layout, weights, table_offsets, ids, offsets, psw, pooling, pooled);
  FS_RETURN_IF_ERROR(cudaSetDevice(weights.device().index) == cudaSuccess
                         ? Status::OK()
                         : Internal(std::string(op) + ": cudaSetDevice failed"));
  FS_ASSIGN_OR_RETURN(void* stream, CudaStreamFor(weights.device(), ctx.stream_slot));
  a.stream = static_cast<cudaStream_t>(stream);
  return a;
}

// An error record on the device, set to "no error" by a kernel queued on the
// op's stream (no host wait).
StatusOr<Tensor> NoErrors(const BagArgs& a, Device device) {
  FS_ASSIGN_OR_RETURN(Tensor t, DeviceTensor(device, 3, DType::kI64));
  InitErrorsKernel<<<1, 1, 0, a.stream>>>(static_cast<DeviceErrors*>(t.raw_data()));
  FS_RETURN_IF_ERROR(LaunchCheck("InitErrorsKernel"));
  return t;
}

// An error record with the offsets checked into it.
StatusOr<Tensor> StartErrors(const BagArgs& a, Device device) {
  FS_ASSIGN_OR_RETURN(Tensor t, NoErrors(a, device));
  const int64_t nb = a.batch * a.tables;
  CheckOffsetsKernel<<<Blocks(nb + 1, 256), 256, 0, a.stream>>>(a, static_cast<DeviceErrors*>(t.raw_data()));
  FS_RETURN_IF_ERROR(LaunchCheck("CheckOffsetsKernel"));
  return t;
}

}  // namespace

Status EmbeddingBagForward(const ExecContext& ctx, const EmbeddingRowLayout& layout, const Tensor& weights,
                           const Tensor& table_offsets, const Tensor& ids, const Tensor& offsets,
                           const Tensor& per_sample_weights, Pooling pooling, Tensor* out) {
  const char* op = "EmbeddingBagForward";
  FS_ASSIGN_OR_RETURN(BagArgs a, MakeArgs(ctx, op, layout, weights, table_offsets, ids, offsets, per_sample_weights,
                                          pooling, *out));
  if (a.batch == 0) return HostChecks(op, a, offsets, table_offsets);
  FS_ASSIGN_OR_RETURN(Tensor err, NoErrors(a, weights.device()));
  auto* d_err = static_cast<DeviceErrors*>(err.raw_data());
  const int64_t nb = a.batch * a.tables;
  const dim3 block(kWarp, kBagsPerBlock);
  const int64_t grid = Blocks(nb, kBagsPerBlock);
  // Four columns a lane where f32 rows, their width and both bases allow.
  const bool wide = layout.dtype == DType::kF32 && a.dim % 4 == 0 && a.row_width % 4 == 0 &&
                    ((reinterpret_cast<uintptr_t>(weights.raw_data()) | reinterpret_cast<uintptr_t>(out->raw_data())) %
                     16) == 0;
  auto launch = [&](auto index) {
    using I = decltype(index);
    const I* pid = ids.data<I>();
    if (layout.dtype == DType::kF16) {
      ForwardKernel<1><<<grid, block, 0, a.stream>>>(a, weights.data<Half>(), pid, out->data<float>(), d_err);
    } else if (wide) {
      ForwardKernel<4><<<grid, block, 0, a.stream>>>(a, weights.data<float>(), pid, out->data<float>(), d_err);
    } else {
      ForwardKernel<1><<<grid, block, 0, a.stream>>>(a, weights.data<float>(), pid, out->data<float>(), d_err);
    }
  };
  if (ids.dtype() == DType::kI32) {
    launch(int32_t{});
  } else {
    launch(int64_t{});
  }
  FS_RETURN_IF_ERROR(LaunchCheck("ForwardKernel"));
  return ReportErrors(op, d_err, ids, a, offsets, table_offsets);
}

Status EmbeddingBagBackwardUpdate(const ExecContext& ctx, const EmbeddingRowLayout& layout,
                                  const SparseOptimizerConfig& config, const Tensor& table_offsets,
                                  const Tensor& ids, const Tensor& offsets, const Tensor& per_sample_weights,
                                  Pooling pooling, const Tensor& grad_out, Tensor* weights) {
  const char* op = "EmbeddingBagBackwardUpdate";
  FS_ASSIGN_OR_RETURN(BagArgs a, MakeArgs(ctx, op, layout, *weights, table_offsets, ids, offsets, per_sample_weights,
                                          pooling, grad_out));
  const int64_t n = a.num_ids;
  if (a.batch == 0 || n == 0) return HostChecks(op, a, offsets, table_offsets);
  const Device dev = weights->device();
  FS_ASSIGN_OR_RETURN(Tensor err, StartErrors(a, dev));
  auto* d_err = static_cast<DeviceErrors*>(err.raw_data());
  FS_RETURN_IF_ERROR(ReportErrors(op, d_err, ids, a, offsets, table_offsets));
  // The keys read each table's base: the table offsets are checked first
  // (after the offsets, the CPU's order).
  if (table_offsets.defined()) {
    std::vector<int64_t> to(static_cast<size_t>(a.tables + 1));
    FS_RETURN_IF_ERROR(
        CopyNow(to.data(), table_offsets.raw_data(), to.size() * sizeof(int64_t), cudaMemcpyDeviceToHost, a.stream));
    FS_RETURN_IF_ERROR(internal::CheckTableOffsetValues(op, to.data(), a.tables, a.rows));
  }

  FS_ASSIGN_OR_RETURN(Tensor keys, DeviceTensor(dev, n, DType::kI64));
  FS_ASSIGN_OR_RETURN(Tensor keys_sorted, DeviceTensor(dev, n, DType::kI64));
  FS_ASSIGN_OR_RETURN(Tensor vals, DeviceTensor(dev, n, DType::kI64));
  FS_ASSIGN_OR_RETURN(Tensor vals_sorted, DeviceTensor(dev, n, DType::kI64));
  FS_ASSIGN_OR_RETURN(Tensor bag_of, DeviceTensor(dev, n, DType::kI64));
  auto* k_in = static_cast<unsigned long long*>(keys.raw_data());
  auto* k_out = static_cast<unsigned long long*>(keys_sorted.raw_data());
  auto* v_in = vals.data<int64_t>();
  auto* v_out = vals_sorted.data<int64_t>();
  const int64_t nb = a.batch * a.tables;
  if (ids.dtype() == DType::kI32) {
    KeysKernel<<<Blocks(nb, 256), 256, 0, a.stream>>>(
        a, ids.data<int32_t>(), k_in, v_in, bag_of.data<int64_t>(), d_err);
  } else {
    KeysKernel<<<Blocks(nb, 256), 256, 0, a.stream>>>(
        a, ids.data<int64_t>(), k_in, v_in, bag_of.data<int64_t>(), d_err);
  }
  FS_RETURN_IF_ERROR(LaunchCheck("KeysKernel"));
  FS_RETURN_IF_ERROR(ReportErrors(op, d_err, ids, a, offsets, table_offsets));

  // Stable radix sort over the bits a row index needs.
  int end_bit = 1;
  while (end_bit < 64 && (int64_t{1} << end_bit) < a.rows) ++end_bit;
  size_t sort_bytes = 0;
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceRadixSort::SortPairs",
                               cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, k_in, k_out, v_in, v_out,
                                                               static_cast<int>(n), 0, end_bit, a.stream)));
  FS_ASSIGN_OR_RETURN(Tensor sort_tmp, DeviceTensor(dev, static_cast<int64_t>(sort_bytes), DType::kU8));
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceRadixSort::SortPairs",
                               cub::DeviceRadixSort::SortPairs(sort_tmp.raw_data(), sort_bytes, k_in, k_out, v_in,
                                                               v_out, static_cast<int>(n), 0, end_bit, a.stream)));
  // Segment heads and their starts.
  FS_ASSIGN_OR_RETURN(Tensor heads, DeviceTensor(dev, n, DType::kI32));
  FS_ASSIGN_OR_RETURN(Tensor group, DeviceTensor(dev, n, DType::kI32));
  HeadsKernel<<<Blocks(n, 256), 256, 0, a.stream>>>(k_out, n, heads.data<int32_t>());
  FS_RETURN_IF_ERROR(LaunchCheck("HeadsKernel"));
  size_t scan_bytes = 0;
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceScan::ExclusiveSum",
                               cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, heads.data<int32_t>(),
                                                             group.data<int32_t>(), static_cast<int>(n), a.stream)));
  FS_ASSIGN_OR_RETURN(Tensor scan_tmp, DeviceTensor(dev, static_cast<int64_t>(scan_bytes), DType::kU8));
  FS_RETURN_IF_ERROR(CudaCheck("cub::DeviceScan::ExclusiveSum",
                               cub::DeviceScan::ExclusiveSum(scan_tmp.raw_data(), scan_bytes, heads.data<int32_t>(),
                                                             group.data<int32_t>(), static_cast<int>(n), a.stream)));
  int32_t last[2] = {0, 0};
  FS_RETURN_IF_ERROR(CopyNow(&last[0], group.data<int32_t>() + (n - 1), 4, cudaMemcpyDeviceToHost, a.stream));
  FS_RETURN_IF_ERROR(CopyNow(&last[1], heads.data<int32_t>() + (n - 1), 4, cudaMemcpyDeviceToHost, a.stream));
  const int64_t num_groups = static_cast<int64_t>(last[0]) + last[1];
  FS_ASSIGN_OR_RETURN(Tensor starts, DeviceTensor(dev, num_groups + 1, DType::kI64));
  StartsKernel<<<Blocks(n, 256), 256, 0, a.stream>>>(heads.data<int32_t>(), group.data<int32_t>(), n,
                                                    starts.data<int64_t>());
  FS_RETURN_IF_ERROR(LaunchCheck("StartsKernel"));

  UpdateArgs u;
  u.kind = static_cast<int>(config.kind);
  u.lr = config.lr;
  u.eps = config.eps;
  u.beta1 = config.beta1;
  u.beta2 = config.beta2;
  u.weight_decay = config.weight_decay;
  // The same bias corrections as the CPU: computed in double, rounded once.
  u.bc1 = config.kind == SparseOptimizer::kAdam
              ? static_cast<float>(1.0 - std::pow(double(config.beta1), double(config.step)))
              : 1.0f;
  u.bc2 = config.kind == SparseOptimizer::kAdam
              ? static_cast<float>(1.0 - std::pow(double(config.beta2), double(config.step)))
              : 1.0f;
  u.state_offset = layout.state_offset();
  const size_t smem = static_cast<size_t>(a.dim) * sizeof(float);
  if (smem > 48 * 1024) {
    return InvalidArgument(std::string(op) + ": dim " + std::to_string(a.dim) +
                           " is above the CUDA implementation's limit of 12288");
  }
  if (layout.dtype == DType::kF16) {
    UpdateKernel<<<num_groups, kWarp, smem, a.stream>>>(a, u, k_out, v_out, bag_of.data<int64_t>(),
                                                        starts.data<int64_t>(),
                                              grad_out.data<float>(), weights->data<Half>());
  } else {
    UpdateKernel<<<num_groups, kWarp, smem, a.stream>>>(a, u, k_out, v_out, bag_of.data<int64_t>(),
                                                        starts.data<int64_t>(),
                                              grad_out.data<float>(), weights->data<float>());
  }
  FS_RETURN_IF_ERROR(LaunchCheck("UpdateKernel"));
  // The update is complete on return, as the CPU's is.
  return CudaCheck("cudaStreamSynchronize", cudaStreamSynchronize(a.stream));
}

}  // namespace foresight::kernels::cuda
