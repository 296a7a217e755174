// The ops of a transformer layer on packed variable-length sequences: a
// batch is the concatenation of its sequences' tokens, T rows in all, and
// `cu_seqlens` (i64 [B + 1], prefix sums of the lengths: cu_seqlens[0] = 0,
// non-decreasing, cu_seqlens[B] = T) says where each sequence starts. No op
// here ever sees a padded token. Same contract as ops.h: the op checks its
// arguments, then dispatches on the device (kernels/src/transformer/*.cc,
// cpu/ and cuda/ twins); outputs are caller-allocated; all math is f32.
#pragma once

#include <cstdint>

#include "foresight/core/context.h"
#include "foresight/core/macros.h"
#include "foresight/core/rng.h"
#include "foresight/core/tensor.h"

namespace foresight::kernels {

// InvalidArgument unless cu_seqlens is i64 [B + 1], 1-D, contiguous, starts at
// 0, never decreases and ends at `total_tokens`, and no sequence is longer
// than max_seqlen. CPU tensors are read in full; for a tensor on another
// device only the shape is checked (its values are the caller's promise).
Status CheckCuSeqlens(const Tensor& cu_seqlens, int64_t total_tokens, int64_t max_seqlen, const char* what);

// ---- varlen multi-head attention (FlashAttention-2 style, fused) ----

struct AttentionOptions {
  int64_t heads = 1;     // H; the head width D is q.size(1) / H
  bool causal = false;   // token i of a sequence attends to tokens <= i only
  float dropout = 0.0f;  // on the attention weights, in [0, 1); 0 = none
  float scale = 0.0f;    // scores are scale * q.k; 0 means 1 / sqrt(D)
};

// The attention dropout decision for query i and key j (positions within
// their sequence) of head h of sequence b: keep when the uniform drawn for
// (b, h, i, j) is >= p. A pure function of (ctx.rng, b, h, i, j), so every
// device and tile layout makes the same mask. One Philox call serves four
// consecutive keys.
FS_HOST_DEVICE inline RngKey AttentionDropoutKey(RngKey rng, int64_t b, int64_t h) {
  return rng.Fold(static_cast<uint64_t>(b)).Fold(static_cast<uint64_t>(h));
}
FS_HOST_DEVICE inline bool AttentionDropoutKeep(RngKey seq_head_key, int64_t i, int64_t j, float p) {
  return seq_head_key.StreamUniform((static_cast<uint64_t>(i) << 32) | static_cast<uint64_t>(j), 0) >= p;
}

// out = softmax(scale * q k^T (+ causal mask)) v per head within each
// sequence, with dropout on the weights (keep decisions from
// AttentionDropoutKeep with key AttentionDropoutKey(ctx.rng, b, h); kept
// weights scaled by 1 / (1 - p)). q, k, v: f32 [T, H * D] whose rows may be
// strided (column views of one fused QKV projection [T, 3 * H * D]); head h
// is columns [h * D, (h + 1) * D). out: f32 [T, H * D], contiguous. lse:
// f32 [H, T], the log of each row's softmax denominator (before dropout),
// which is all the backward needs besides the inputs: no S x S matrix is
// kept, and the CPU holds one tile of scores at a time.
Status VarlenAttention(const ExecContext& ctx, const AttentionOptions& opts, const Tensor& q, const Tensor& k,
                       const Tensor& v, const Tensor& cu_seqlens, int64_t max_seqlen, Tensor* out, Tensor* lse);

// Gradients of VarlenAttention (same ctx.rng, options and inputs; out and
// lse from the forward) for grad_out [T, H * D]: grad_q, grad_k, grad_v
// [T, H * D] (overwritten; rows may be strided, e.g. views of one
// [T, 3 * H * D] gradient). Scores are recomputed tile by tile from lse.
Status VarlenAttentionBackward(const ExecContext& ctx, const AttentionOptions& opts, const Tensor& q,
                               const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                               const Tensor& grad_out, const Tensor& cu_seqlens, int64_t max_seqlen,
                               Tensor* grad_q, Tensor* grad_k, Tensor* grad_v);

// ---- LayerNorm fused with bias and residual add ----

// h = x + bias + residual (bias [E] and residual [T, E] optional: pass an
// undefined tensor), out = (h - mean(h)) / sqrt(var(h) + eps) * gamma + beta
// per row, gamma and beta [E]. `sum` (optional, [T, E]) receives h, which
// the backward needs (when neither bias nor residual is given h is x); it
// may be x itself (or residual), overwritten in place, when nothing else
// needs that tensor's values.
// mean and rstd (f32 [T]) receive the row statistics; nothing else is kept.
Status LayerNorm(const ExecContext& ctx, const Tensor& x, const Tensor& bias, const Tensor& residual,
                 const Tensor& gamma, const Tensor& beta, float eps, Tensor* sum, Tensor* out, Tensor* mean,
                 Tensor* rstd);
// Gradients of LayerNorm w.r.t. h, gamma and beta (all overwritten, summed
// over rows in a fixed order) from h, gamma, the saved mean / rstd and
// grad_out. grad_h is also the gradient of x and residual; the bias's is
// its column sum.
Status LayerNormBackward(const ExecContext& ctx, const Tensor& h, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, const Tensor& grad_out, Tensor* grad_h, Tensor* grad_gamma,
                         Tensor* grad_beta);

// ---- GELU ----

enum class GeluForm {
  kErf,   // x * Phi(x), the exact form (BERT, PyTorch's default)
  kTanh,  // x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2
};
const char* GeluFormName(GeluForm f);

// out = gelu(x + bias); x [N, F] f32, bias [F] optional (undefined: none).
Status Gelu(const ExecContext& ctx, GeluForm form, const Tensor& x, const Tensor& bias, Tensor* out);
// grad_x = gelu'(x + bias) * grad_out, from the forward's input (the
// output is not needed). The bias's gradient is grad_x's column sum.
// grad_x may be grad_out itself (overwritten in place).
Status GeluBackward(const ExecContext& ctx, GeluForm form, const Tensor& x, const Tensor& bias,
                    const Tensor& grad_out, Tensor* grad_x);

}  // namespace foresight::kernels
