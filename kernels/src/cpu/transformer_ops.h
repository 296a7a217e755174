// CPU implementations of the ops in foresight/kernels/transformer.h. The
// dispatcher (kernels/src/transformer.cc) has checked dtypes, shapes,
// devices and cu_seqlens; these functions trust them.
#pragma once

#include "foresight/kernels/transformer.h"

namespace foresight::kernels::cpu {

Status VarlenAttention(const ExecContext& ctx, const AttentionOptions& opts, const Tensor& q, const Tensor& k,
                       const Tensor& v, const Tensor& cu_seqlens, int64_t max_seqlen, Tensor* out, Tensor* lse);
Status VarlenAttentionBackward(const ExecContext& ctx, const AttentionOptions& opts, const Tensor& q,
                               const Tensor& k, const Tensor& v, const Tensor& out, const Tensor& lse,
                               const Tensor& grad_out, const Tensor& cu_seqlens, int64_t max_seqlen,
                               Tensor* grad_q, Tensor* grad_k, Tensor* grad_v);
Status LayerNorm(const ExecContext& ctx, const Tensor& x, const Tensor& bias, const Tensor& residual,
                 const Tensor& gamma, const Tensor& beta, float eps, Tensor* sum, Tensor* out, Tensor* mean,
                 Tensor* rstd);
Status LayerNormBackward(const ExecContext& ctx, const Tensor& h, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, const Tensor& grad_out, Tensor* grad_h, Tensor* grad_gamma,
                         Tensor* grad_beta);
Status Gelu(const ExecContext& ctx, GeluForm form, const Tensor& x, const Tensor& bias, Tensor* out);
Status GeluBackward(const ExecContext& ctx, GeluForm form, const Tensor& x, const Tensor& bias,
                    const Tensor& grad_out, Tensor* grad_x);

}  // namespace foresight::kernels::cpu
