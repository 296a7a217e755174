// Varlen multi-head attention: argument checks and device dispatch.
#include <cmath>
#include <string>

#include "check.h"
#include "cpu/transformer_ops.h"
#include "cuda/transformer_ops.h"
#include "foresight/kernels/transformer.h"

namespace foresight::kernels {

Status CheckCuSeqlens(const Tensor& cu_seqlens, int64_t total_tokens, int64_t max_seqlen, const char* what) {
  const std::string w(what);
  FS_RETURN_IF_ERROR(CheckDType(cu_seqlens, DType::kI64, what));
  FS_RETURN_IF_ERROR(CheckDim(cu_seqlens, 1, what));
  FS_RETURN_IF_ERROR(CheckContiguous(cu_seqlens, what));
  if (cu_seqlens.size(0) < 1) return InvalidArgument(w + ": expected at least 1 offset (B + 1 for B sequences), got 0");
  if (max_seqlen < 0) return InvalidArgument(w + ": max_seqlen is negative (" + std::to_string(max_seqlen) + ")");
  if (!cu_seqlens.device().is_cpu()) return Status::OK();
  const int64_t* c = cu_seqlens.data<int64_t>();
  const int64_t n = cu_seqlens.size(0);
  if (c[0] != 0) return InvalidArgument(w + ": offset 0 must be 0, got " + std::to_string(c[0]));
  for (int64_t b = 0; b + 1 < n; ++b) {
    const int64_t len = c[b + 1] - c[b];
    if (len < 0) {
      return InvalidArgument(w + ": offsets decrease at sequence " + std::to_string(b) + " (" + std::to_string(c[b]) +
                             " then " + std::to_string(c[b + 1]) + ")");
    }
    if (len > max_seqlen) {
      return InvalidArgument(w + ": sequence " + std::to_string(b) + " has " + std::to_string(len) +
                             " tokens, more than max_seqlen " + std::to_string(max_seqlen));
    }
  }
  if (c[n - 1] != total_tokens) {
    return InvalidArgument(w + ": the last offset must be the number of tokens " + std::to_string(total_tokens) +
                           ", got " + std::to_string(c[n - 1]));
  }
  return Status::OK();
}

namespace {

// A [T, H * D] f32 matrix whose rows may be strided (columns contiguous).
Status CheckRows(const Tensor& t, int64_t rows, int64_t cols, const char* what) {
  FS_RETURN_IF_ERROR(CheckDType(t, DType::kF32, what));
  FS_RETURN_IF_ERROR(CheckShape(t, {rows, cols}, what));
  if (cols > 1 && t.stride(1) != 1) {
    return InvalidArgument(std::string(what) + ": columns must be contiguous (stride 1), got stride " +
                           std::to_string(t.stride(1)));
  }
  if (rows > 1 && t.stride(0) < cols) {
    return InvalidArgument(std::string(what) + ": row stride " + std::to_string(t.stride(0)) +
                           " is smaller than the row width " + std::to_string(cols));
  }
  return Status::OK();
}

Status CheckCommon(const char* op, const AttentionOptions& opts, const Tensor& q, const Tensor& k,
                   const Tensor& v, const Tensor& cu_seqlens, int64_t max_seqlen) {
  const std::string o(op);
  FS_RETURN_IF_ERROR(CheckDefined(q, (o + ": q").c_str()));
  FS_RETURN_IF_ERROR(CheckDim(q, 2, (o + ": q").c_str()));
  if (opts.heads <= 0) return InvalidArgument(o + ": heads must be positive, got " + std::to_string(opts.heads));
  if (q.size(1) == 0 || q.size(1) % opts.heads != 0) {
    return InvalidArgument(o + ": q has " + std::to_string(q.size(1)) + " columns, not a positive multiple of " +
                           std::to_string(opts.heads) + " heads");
  }
  if (!(opts.dropout >= 0.0f && opts.dropout < 1.0f)) {
    return InvalidArgument(o + ": dropout must be in [0, 1), got " + std::to_string(opts.dropout));
  }
  if (!(opts.scale >= 0.0f) || !std::isfinite(opts.scale)) {
    return InvalidArgument(o + ": scale must be finite and >= 0 (0: 1/sqrt(head width)), got " +
                           std::to_string(opts.scale));
  }
  const int64_t t = q.size(0), e = q.size(1);
  FS_RETURN_IF_ERROR(CheckRows(q, t, e, (o + ": q").c_str()));
  FS_RETURN_IF_ERROR(CheckRows(k, t, e, (o + ": k").c_str()));
  FS_RETURN_IF_ERROR(CheckRows(v, t, e, (o + ": v").c_str()));
  FS_RETURN_IF_ERROR(CheckCuSeqlens(cu_seqlens, t, max_seqlen, (o + ": cu_seqlens").c_str()));
  return internal::CheckOnDevice(q.device(), {&k, &v, &cu_seqlens}, op);
}

AttentionOptions Resolved(AttentionOptions opts, int64_t width) {
  if (opts.scale == 0.0f) opts.scale = 1.0f / std::sqrt(static_cast<float>(width / opts.heads));
  return opts;
}

}  // namespace

Status VarlenAttention(const ExecContext& ctx, const AttentionOptions& opts, const Tensor& q, const Tensor& k,
                       const Tensor& v, const Tensor& cu_seqlens, int64_t max_seqlen, Tensor* out, Tensor* lse) {
  FS_RETURN_IF_ERROR(CheckCommon("VarlenAttention", opts, q, k, v, cu_seqlens, max_seqlen));
  const int64_t t = q.size(0), e = q.size(1);
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, {t, e}, DType::kF32, "VarlenAttention: out"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(lse, {opts.heads, t}, DType::kF32, "VarlenAttention: lse"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(q.device(), {out, lse}, "VarlenAttention"));
  const AttentionOptions r = Resolved(opts, e);
  if (q.device().is_cpu()) return cpu::VarlenAttention(ctx, r, q, k, v, cu_seqlens, max_seqlen, out, lse);
  return cuda::VarlenAttention(ctx, r, q, k, v, cu_seqlens, max_seqlen, out, lse);
}

Status VarlenAttentionBackward(const ExecContext& ctx, const AttentionOptions& opts, const Tensor& q,
                               const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                               const Tensor& grad_out, const Tensor& cu_seqlens, int64_t max_seqlen,
                               Tensor* grad_q, Tensor* grad_k, Tensor* grad_v) {
  const char* op = "VarlenAttentionBackward";
  FS_RETURN_IF_ERROR(CheckCommon(op, opts, q, k, v, cu_seqlens, max_seqlen));
  const int64_t t = q.size(0), e = q.size(1);
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(out, {t, e}, "VarlenAttentionBackward: out"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(lse, {opts.heads, t}, "VarlenAttentionBackward: lse"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(grad_out, {t, e}, "VarlenAttentionBackward: grad_out"));
  if (grad_q == nullptr || grad_k == nullptr || grad_v == nullptr) {
    return InvalidArgument("VarlenAttentionBackward: grad_q, grad_k and grad_v must not be null");
  }
  FS_RETURN_IF_ERROR(CheckRows(*grad_q, t, e, "VarlenAttentionBackward: grad_q"));
  FS_RETURN_IF_ERROR(CheckRows(*grad_k, t, e, "VarlenAttentionBackward: grad_k"));
  FS_RETURN_IF_ERROR(CheckRows(*grad_v, t, e, "VarlenAttentionBackward: grad_v"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(q.device(), {&out, &lse, &grad_out, grad_q, grad_k, grad_v}, op));
  const AttentionOptions r = Resolved(opts, e);
  if (q.device().is_cpu()) {
    return cpu::VarlenAttentionBackward(ctx, r, q, k, v, out, lse, grad_out, cu_seqlens, max_seqlen, grad_q, grad_k,
                                        grad_v);
  }
  return cuda::VarlenAttentionBackward(ctx, r, q, k, v, out, lse, grad_out, cu_seqlens, max_seqlen, grad_q, grad_k,
                                       grad_v);
}

}  // namespace foresight::kernels
