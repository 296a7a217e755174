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
};

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

template <typename W, typename I>
__global__ void ForwardKernel(BagArgs a, const W* weights, const I* ids, float* out, DeviceErrors* err) {
  const int64_t q = blockIdx.x * static_cast<int64_t>(kBagsPerBlock) + threadIdx.y;
  if (q >= a.batch * a.tables) return;
  const int64_t t = q / a.batch, b = q % a.batch;
  const int64_t base = a.base(t), limit = a.limit(t);
  const int64_t k0 = a.offsets[q], k1 = a.offsets[q + 1];
  float* o = out + (b * a.tables + t) * a.dim;
  for (int64_t j = threadIdx.x; j < a.dim; j += kWarp) {
    float acc = 0.0f;
    for (int64_t k = k0; k < k1; ++k) {
      const int64_t id = static_cast<int64_t>(ids[k]);
      if (id < 0 || id >= limit) {
        atomicMin(&err->bad_id, static_cast<long long>(k));
        return;
      }
      const float x = LoadW(weights + (base + id) * a.row_width + j);
      if (a.psw != nullptr) {
        acc = __fadd_rn(acc, __fmul_rn(a.psw[k], x));
      } else {
        acc = __fadd_rn(acc, x);
      }
    }
    if (a.mean && k1 > k0) acc = __fdiv_rn(acc, static_cast<float>(k1 - k0));
    o[j] = acc;
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

// Reads the table offsets to the host (T+1 values) to check them.
Status CheckTableOffsets(const char* op, const Tensor& table_offsets, int64_t tables, int64_t rows,
                         cudaStream_t s) {
  if (!table_offsets.defined()) return Status::OK();
  std::vector<int64_t> to(static_cast<size_t>(tables + 1));
  FS_RETURN_IF_ERROR(
      CopyNow(to.data(), table_offsets.raw_data(), to.size() * sizeof(int64_t), cudaMemcpyDeviceToHost, s));
  return internal::CheckTableOffsetValues(op, to.data(), tables, rows);
}

// Copies the device's error record back and turns it into a Status.
Status ReportErrors(const char* op, const DeviceErrors* d_err, const Tensor& ids, int64_t batch,
                    cudaStream_t s) {
  DeviceErrors err;
  FS_RETURN_IF_ERROR(CopyNow(&err, d_err, sizeof(err), cudaMemcpyDeviceToHost, s));
  if (err.bad_offset != INT64_MAX) {
    return InvalidArgument(std::string(op) + ": offsets must start at 0, not decrease and end at the " +
                           std::to_string(ids.size(0)) + " ids; the first violation is at offsets[" +
                           std::to_string(err.bad_offset) + "]");
  }
  if (err.bad_id != INT64_MAX) {
    int64_t id = 0;
    const size_t es = ids.element_size();
    int64_t raw = 0;
    FS_RETURN_IF_ERROR(
        CopyNow(&raw, static_cast<const char*>(ids.raw_data()) + err.bad_id * es, es, cudaMemcpyDeviceToHost, s));
    id = es == 4 ? static_cast<int64_t>(static_cast<int32_t>(raw)) : raw;
    return OutOfRange(std::string(op) + ": ids[" + std::to_string(err.bad_id) + "] = " + std::to_string(id) +
                      " is out of its table's range");
  }
  return Status::OK();
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
  FS_RETURN_IF_ERROR(CheckTableOffsets(op, table_offsets, a.tables, a.rows, a.stream));
  return a;
}

// An error record on the device, initialised to "no error", with the
// offsets checked into it.
StatusOr<Tensor> StartErrors(const BagArgs& a, Device device) {
  FS_ASSIGN_OR_RETURN(Tensor t, DeviceTensor(device, 2, DType::kI64));
  const DeviceErrors none{INT64_MAX, INT64_MAX};
  FS_RETURN_IF_ERROR(CopyNow(t.raw_data(), &none, sizeof(none), cudaMemcpyHostToDevice, a.stream));
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
  if (a.batch == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(Tensor err, StartErrors(a, weights.device()));
  auto* d_err = static_cast<DeviceErrors*>(err.raw_data());
  // Offsets must be valid before any bag reads its range.
  FS_RETURN_IF_ERROR(ReportErrors(op, d_err, ids, a.batch, a.stream));
  const int64_t nb = a.batch * a.tables;
  const dim3 block(kWarp, kBagsPerBlock);
  const int64_t grid = Blocks(nb, kBagsPerBlock);
  const bool i32 = ids.dtype() == DType::kI32;
  if (layout.dtype == DType::kF16) {
    if (i32) {
      ForwardKernel<<<grid, block, 0, a.stream>>>(
          a, weights.data<Half>(), ids.data<int32_t>(), out->data<float>(), d_err);
    } else {
      ForwardKernel<<<grid, block, 0, a.stream>>>(
          a, weights.data<Half>(), ids.data<int64_t>(), out->data<float>(), d_err);
    }
  } else if (i32) {
    ForwardKernel<<<grid, block, 0, a.stream>>>(
        a, weights.data<float>(), ids.data<int32_t>(), out->data<float>(), d_err);
  } else {
    ForwardKernel<<<grid, block, 0, a.stream>>>(
        a, weights.data<float>(), ids.data<int64_t>(), out->data<float>(), d_err);
  }
  FS_RETURN_IF_ERROR(LaunchCheck("ForwardKernel"));
  return ReportErrors(op, d_err, ids, a.batch, a.stream);
}

Status EmbeddingBagBackwardUpdate(const ExecContext& ctx, const EmbeddingRowLayout& layout,
                                  const SparseOptimizerConfig& config, const Tensor& table_offsets,
                                  const Tensor& ids, const Tensor& offsets, const Tensor& per_sample_weights,
                                  Pooling pooling, const Tensor& grad_out, Tensor* weights) {
  const char* op = "EmbeddingBagBackwardUpdate";
  FS_ASSIGN_OR_RETURN(BagArgs a, MakeArgs(ctx, op, layout, *weights, table_offsets, ids, offsets, per_sample_weights,
                                          pooling, grad_out));
  const int64_t n = a.num_ids;
  if (a.batch == 0 || n == 0) return Status::OK();
  const Device dev = weights->device();
  FS_ASSIGN_OR_RETURN(Tensor err, StartErrors(a, dev));
  auto* d_err = static_cast<DeviceErrors*>(err.raw_data());
  FS_RETURN_IF_ERROR(ReportErrors(op, d_err, ids, a.batch, a.stream));

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
  FS_RETURN_IF_ERROR(ReportErrors(op, d_err, ids, a.batch, a.stream));

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
