// Varlen multi-head attention on CUDA, the CPU op's contract: one warp per
// query row (lanes over the head's columns, up to kMaxHeadDim), an online
// softmax over the row's keys, so no score matrix exists anywhere; the
// dropout mask is AttentionDropoutKeep, the CPU's function. The backward
// recomputes scores from the saved log-sum-exp in two deterministic passes
// without atomics: one warp per query row accumulates its dQ over the keys,
// one warp per key row its dK and dV over the queries.
#include <cuda_runtime.h>

#include <cmath>

#include "transformer_ops.h"
#include "transformer_util.cuh"

namespace foresight::kernels::cuda {

using transformer::Blocks;
using transformer::CudaCheck;
using transformer::GridYZ;
using transformer::kWarp;
using transformer::LaunchCheck;
using transformer::WarpSum;

namespace {

constexpr int kPerLane = 8;                 // columns a lane holds
constexpr int kMaxHeadDim = kWarp * kPerLane;  // 256
constexpr int kRowsPerBlock = 4;            // warps (rows) a block

struct AttnArgs {
  const float* q;
  const float* k;
  const float* v;
  int64_t ldq, ldk, ldv;
  const int64_t* cu;
  int64_t batch, heads, d, total;
  float scale, p, inv_keep;
  bool causal;
  RngKey rng;
};

// Loads columns [h*d, h*d + d) of row `row` of m (leading dimension ld) into
// the lane's slots (column lane + 32 t in slot t; 0 past d).
__device__ inline void LoadRow(const float* m, int64_t ld, int64_t row, int64_t col0, int64_t d, int lane,
                               float* out) {
#pragma unroll
  for (int t = 0; t < kPerLane; ++t) {
    const int64_t x = lane + kWarp * t;
    out[t] = x < d ? m[row * ld + col0 + x] : 0.0f;
  }
}

__device__ inline float Dot(const float* a, const float* b) {
  float s = 0.0f;
#pragma unroll
  for (int t = 0; t < kPerLane; ++t) s += a[t] * b[t];
  return WarpSum(s);
}

__device__ inline float DropScale(const AttnArgs& a, RngKey key, int64_t i, int64_t j) {
  if (a.p <= 0.0f) return 1.0f;
  return AttentionDropoutKeep(key, i, j, a.p) ? a.inv_keep : 0.0f;
}

// grid (query blocks, heads, batch); block (32, kRowsPerBlock).
__global__ void ForwardKernel(AttnArgs a, float* out, float* lse) {
  const int lane = threadIdx.x;
  const int64_t h = blockIdx.y;
  for (int64_t b = blockIdx.z; b < a.batch; b += gridDim.z) {
    const int64_t base = a.cu[b], len = a.cu[b + 1] - base;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
    if (i >= len) continue;
    const RngKey key = AttentionDropoutKey(a.rng, b, h);
    float qv[kPerLane], kv[kPerLane], vv[kPerLane], acc[kPerLane];
    LoadRow(a.q, a.ldq, base + i, h * a.d, a.d, lane, qv);
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) acc[t] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    const int64_t n = a.causal ? i + 1 : len;
    for (int64_t j = 0; j < n; ++j) {
      LoadRow(a.k, a.ldk, base + j, h * a.d, a.d, lane, kv);
      const float s = a.scale * Dot(qv, kv);
      const float mx = fmaxf(m, s);
      const float corr = expf(m - mx);  // 0 for the first key (m = -inf)
      const float e = expf(s - mx);
      l = l * corr + e;
      m = mx;
      const float w = e * DropScale(a, key, i, j);
      LoadRow(a.v, a.ldv, base + j, h * a.d, a.d, lane, vv);
#pragma unroll
      for (int t = 0; t < kPerLane; ++t) acc[t] = acc[t] * corr + w * vv[t];
    }
    const float inv_l = 1.0f / l;
    const int64_t width = a.heads * a.d;
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const int64_t x = lane + kWarp * t;
      if (x < a.d) out[(base + i) * width + h * a.d + x] = acc[t] * inv_l;
    }
    if (lane == 0) lse[h * a.total + base + i] = m + logf(l);
  }
}

// delta[h, t] = dO[t, head h] . O[t, head h]. grid (token blocks, heads).
__global__ void DeltaKernel(AttnArgs a, const float* out, const float* grad_out, float* delta) {
  const int lane = threadIdx.x;
  const int64_t h = blockIdx.y;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (t >= a.total) return;
  const int64_t width = a.heads * a.d;
  float o[kPerLane], g[kPerLane];
  LoadRow(out, width, t, h * a.d, a.d, lane, o);
  LoadRow(grad_out, width, t, h * a.d, a.d, lane, g);
  const float s = Dot(o, g);
  if (lane == 0) delta[h * a.total + t] = s;
}

// dQ_i = scale * sum_j dS_ij K_j, one warp per query row.
__global__ void GradQKernel(AttnArgs a, const float* lse, const float* delta, const float* grad_out, float* gq,
                            int64_t ldgq) {
  const int lane = threadIdx.x;
  const int64_t h = blockIdx.y;
  const int64_t width = a.heads * a.d;
  for (int64_t b = blockIdx.z; b < a.batch; b += gridDim.z) {
    const int64_t base = a.cu[b], len = a.cu[b + 1] - base;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
    if (i >= len) continue;
    const RngKey key = AttentionDropoutKey(a.rng, b, h);
    float qv[kPerLane], go[kPerLane], kv[kPerLane], vv[kPerLane], acc[kPerLane];
    LoadRow(a.q, a.ldq, base + i, h * a.d, a.d, lane, qv);
    LoadRow(grad_out, width, base + i, h * a.d, a.d, lane, go);
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) acc[t] = 0.0f;
    const float li = lse[h * a.total + base + i], di = delta[h * a.total + base + i];
    const int64_t n = a.causal ? i + 1 : len;
    for (int64_t j = 0; j < n; ++j) {
      LoadRow(a.k, a.ldk, base + j, h * a.d, a.d, lane, kv);
      LoadRow(a.v, a.ldv, base + j, h * a.d, a.d, lane, vv);
      const float pij = expf(a.scale * Dot(qv, kv) - li);
      const float ds = pij * (Dot(go, vv) * DropScale(a, key, i, j) - di);
#pragma unroll
      for (int t = 0; t < kPerLane; ++t) acc[t] += a.scale * ds * kv[t];
    }
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const int64_t x = lane + kWarp * t;
      if (x < a.d) gq[(base + i) * ldgq + h * a.d + x] = acc[t];
    }
  }
}

// dV_j = sum_i P~_ij dO_i and dK_j = scale * sum_i dS_ij Q_i, one warp per
// key row.
__global__ void GradKVKernel(AttnArgs a, const float* lse, const float* delta, const float* grad_out, float* gk,
                             int64_t ldgk, float* gv, int64_t ldgv) {
  const int lane = threadIdx.x;
  const int64_t h = blockIdx.y;
  const int64_t width = a.heads * a.d;
  for (int64_t b = blockIdx.z; b < a.batch; b += gridDim.z) {
    const int64_t base = a.cu[b], len = a.cu[b + 1] - base;
    const int64_t j = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
    if (j >= len) continue;
    const RngKey key = AttentionDropoutKey(a.rng, b, h);
    float kv[kPerLane], vv[kPerLane], qv[kPerLane], go[kPerLane], dk[kPerLane], dv[kPerLane];
    LoadRow(a.k, a.ldk, base + j, h * a.d, a.d, lane, kv);
    LoadRow(a.v, a.ldv, base + j, h * a.d, a.d, lane, vv);
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) dk[t] = dv[t] = 0.0f;
    for (int64_t i = a.causal ? j : 0; i < len; ++i) {
      LoadRow(a.q, a.ldq, base + i, h * a.d, a.d, lane, qv);
      LoadRow(grad_out, width, base + i, h * a.d, a.d, lane, go);
      const float li = lse[h * a.total + base + i], di = delta[h * a.total + base + i];
      const float pij = expf(a.scale * Dot(qv, kv) - li);
      const float keep = DropScale(a, key, i, j);
      const float ds = pij * (Dot(go, vv) * keep - di);
#pragma unroll
      for (int t = 0; t < kPerLane; ++t) {
        dv[t] += pij * keep * go[t];
        dk[t] += a.scale * ds * qv[t];
      }
    }
#pragma unroll
    for (int t = 0; t < kPerLane; ++t) {
      const int64_t x = lane + kWarp * t;
      if (x < a.d) {
        gk[(base + j) * ldgk + h * a.d + x] = dk[t];
        gv[(base + j) * ldgv + h * a.d + x] = dv[t];
      }
    }
  }
}

int64_t Ld(const Tensor& t) { return t.size(0) > 1 ? t.stride(0) : t.size(1); }

StatusOr<AttnArgs> MakeArgs(const ExecContext& ctx, const AttentionOptions& opts, const Tensor& q, const Tensor& k,
                            const Tensor& v, const Tensor& cu_seqlens, const char* op) {
  AttnArgs a;
  a.heads = opts.heads;
  a.d = q.size(1) / opts.heads;
  if (a.d > kMaxHeadDim) {
    return Unimplemented(std::string(op) + " on cuda: head width " + std::to_string(a.d) + " is above " +
                         std::to_string(kMaxHeadDim) + " (the CPU implementation has no limit)");
  }
  a.q = q.data<float>();
  a.k = k.data<float>();
  a.v = v.data<float>();
  a.ldq = Ld(q);
  a.ldk = Ld(k);
  a.ldv = Ld(v);
  a.cu = cu_seqlens.data<int64_t>();
  a.batch = cu_seqlens.size(0) - 1;
  a.total = q.size(0);
  a.scale = opts.scale;
  a.p = opts.dropout;
  a.inv_keep = 1.0f / (1.0f - opts.dropout);
  a.causal = opts.causal;
  a.rng = ctx.rng;
  FS_RETURN_IF_ERROR(CudaCheck("cudaSetDevice", cudaSetDevice(q.device().index)));
  return a;
}

}  // namespace

Status VarlenAttention(const ExecContext& ctx, const AttentionOptions& opts, const Tensor& q, const Tensor& k,
                       const Tensor& v, const Tensor& cu_seqlens, int64_t max_seqlen, Tensor* out, Tensor* lse) {
  FS_ASSIGN_OR_RETURN(AttnArgs a, MakeArgs(ctx, opts, q, k, v, cu_seqlens, "VarlenAttention"));
  if (a.batch == 0 || a.total == 0) return Status::OK();
  const dim3 grid(Blocks(max_seqlen, kRowsPerBlock), GridYZ(a.heads), GridYZ(a.batch));
  const dim3 block(kWarp, kRowsPerBlock);
  ForwardKernel<<<grid, block>>>(a, out->data<float>(), lse->data<float>());
  return LaunchCheck("VarlenAttention forward kernel");
}

Status VarlenAttentionBackward(const ExecContext& ctx, const AttentionOptions& opts, const Tensor& q,
                               const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                               const Tensor& grad_out, const Tensor& cu_seqlens, int64_t max_seqlen,
                               Tensor* grad_q, Tensor* grad_k, Tensor* grad_v) {
  FS_ASSIGN_OR_RETURN(AttnArgs a, MakeArgs(ctx, opts, q, k, v, cu_seqlens, "VarlenAttentionBackward"));
  if (a.batch == 0 || a.total == 0) return Status::OK();
  FS_ASSIGN_OR_RETURN(Tensor delta, Tensor::EmptyOn(q.device(), {a.heads, a.total}, DType::kF32));
  const dim3 block(kWarp, kRowsPerBlock);
  DeltaKernel<<<dim3(Blocks(a.total, kRowsPerBlock), GridYZ(a.heads)), block>>>(a, out.data<float>(),
                                                                                grad_out.data<float>(),
                                                                                delta.data<float>());
  FS_RETURN_IF_ERROR(LaunchCheck("VarlenAttentionBackward delta kernel"));
  const dim3 grid(Blocks(max_seqlen, kRowsPerBlock), GridYZ(a.heads), GridYZ(a.batch));
  GradQKernel<<<grid, block>>>(a, lse.data<float>(), delta.data<float>(), grad_out.data<float>(),
                               grad_q->data<float>(), Ld(*grad_q));
  FS_RETURN_IF_ERROR(LaunchCheck("VarlenAttentionBackward dQ kernel"));
  GradKVKernel<<<grid, block>>>(a, lse.data<float>(), delta.data<float>(), grad_out.data<float>(),
                                grad_k->data<float>(), Ld(*grad_k), grad_v->data<float>(), Ld(*grad_v));
  FS_RETURN_IF_ERROR(LaunchCheck("VarlenAttentionBackward dK/dV kernel"));
  // `delta` goes back to the device cache on return: wait for its readers.
  return CudaCheck("cudaStreamSynchronize", cudaStreamSynchronize(0));
}

}  // namespace foresight::kernels::cuda
