// CUDA twins of the ops in foresight/kernels/transformer.h (cuda/attention.cu,
// layer_norm.cu, gelu.cu), tested against the CPU ones. A build without CUDA
// links no_cuda_transformer.cc, whose functions return Unimplemented. The
// dispatchers (kernels/src/attention.cc, layer_norm.cc, gelu.cc) have checked
// dtypes, shapes, devices and the shape of cu_seqlens; these functions trust
// them. They run on the default stream and return once their work is queued
// (the backward passes wait for their scratch buffers to be free).
#pragma once

#include "foresight/kernels/transformer.h"

namespace foresight::kernels::cuda {

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

}  // namespace foresight::kernels::cuda
