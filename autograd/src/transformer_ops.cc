// The differentiable ops of transformer layers: one tape node per fused
// kernel (attention, GELU, LayerNorm with bias and residual).
#include <string>

#include "foresight/autograd/transformer.h"
#include "foresight/kernels/ops.h"
#include "internal.h"

namespace foresight::autograd {

using internal::AccumulateWith;
using internal::CheckMatrix;
using internal::EmptyF32;

StatusOr<Var> VarlenSelfAttention(Tape& tape, const Var& qkv, const PackedSequences& packed,
                                  const kernels::AttentionOptions& options) {
  FS_RETURN_IF_ERROR(CheckMatrix(qkv, "VarlenSelfAttention", "qkv"));
  const int64_t tokens = qkv.shape()[0], width3 = qkv.shape()[1];
  if (width3 % 3 != 0) {
    return InvalidArgument("VarlenSelfAttention: qkv has " + std::to_string(width3) +
                           " columns, expected 3 * hidden (q, k, v side by side)");
  }
  if (tokens != packed.total_tokens()) {
    return InvalidArgument("VarlenSelfAttention: qkv has " + std::to_string(tokens) +
                           " rows but the packed batch has " + std::to_string(packed.total_tokens()) + " tokens");
  }
  const int64_t width = width3 / 3;
  kernels::AttentionOptions opts = options;
  if (!tape.training()) opts.dropout = 0.0f;
  const ExecContext ctx = opts.dropout > 0.0f ? tape.ctx().WithRng(tape.NextRngKey()) : tape.ctx();
  const Tensor& all = qkv.value();
  const Tensor q = all.Slice(1, 0, width), k = all.Slice(1, width, 2 * width), v = all.Slice(1, 2 * width, width3);
  const Device device = all.device();
  FS_ASSIGN_OR_RETURN(Tensor out, EmptyF32(device, {tokens, width}));
  FS_ASSIGN_OR_RETURN(Tensor lse, EmptyF32(device, {opts.heads, tokens}));
  FS_RETURN_IF_ERROR(
      kernels::VarlenAttention(ctx, opts, q, k, v, packed.cu_seqlens(), packed.max_seqlen(), &out, &lse));
  const RngKey key = ctx.rng;
  return tape.RecordGrad({qkv}, out, [qkv, packed, opts, out, lse, key, width](const ExecContext& bctx,
                                                                               const Tensor& gout) -> Status {
    const ExecContext c = bctx.WithRng(key);
    const Tensor& all = qkv.value();
    const Tensor q = all.Slice(1, 0, width), k = all.Slice(1, width, 2 * width), v = all.Slice(1, 2 * width, 3 * width);
    return AccumulateWith(c, qkv, [&](Tensor* g) {
      Tensor gq = g->Slice(1, 0, width), gk = g->Slice(1, width, 2 * width), gv = g->Slice(1, 2 * width, 3 * width);
      return kernels::VarlenAttentionBackward(c, opts, q, k, v, out, lse, gout, packed.cu_seqlens(),
                                              packed.max_seqlen(), &gq, &gk, &gv);
    });
  });
}

StatusOr<Var> Gelu(Tape& tape, const Var& x, const Var& bias, kernels::GeluForm form) {
  FS_RETURN_IF_ERROR(CheckMatrix(x, "Gelu", "input"));
  const ExecContext& ctx = tape.ctx();
  FS_ASSIGN_OR_RETURN(Tensor y, EmptyF32(x.value().device(), x.shape()));
  const Tensor b = bias.defined() ? bias.value() : Tensor();
  FS_RETURN_IF_ERROR(kernels::Gelu(ctx, form, x.value(), b, &y));
  std::vector<Var> inputs{x};
  if (bias.defined()) inputs.push_back(bias);
  return tape.RecordGrad(inputs, y, [x, bias, form](const ExecContext& ctx, const Tensor& gy) -> Status {
    const Tensor b = bias.defined() ? bias.value() : Tensor();
    FS_ASSIGN_OR_RETURN(Tensor gx, EmptyF32(x.value().device(), x.shape()));
    FS_RETURN_IF_ERROR(kernels::GeluBackward(ctx, form, x.value(), b, gy, &gx));
    if (bias.defined() && bias.requires_grad()) {
      FS_RETURN_IF_ERROR(AccumulateWith(ctx, bias, [&](Tensor* gb) { return kernels::SumRows(ctx, gx, gb); }));
    }
    if (x.requires_grad()) FS_RETURN_IF_ERROR(x.AccumulateGrad(ctx, gx));
    return Status::OK();
  });
}

StatusOr<Var> GeluMatMul(Tape& tape, const Var& x, const Var& bias, const Var& w, kernels::GeluForm form) {
  FS_RETURN_IF_ERROR(CheckMatrix(x, "GeluMatMul", "input"));
  FS_RETURN_IF_ERROR(CheckMatrix(w, "GeluMatMul", "weight"));
  if (x.shape()[1] != w.shape()[0]) {
    return InvalidArgument("GeluMatMul: input " + ShapeToString(x.shape()) + " does not fit weight " +
                           ShapeToString(w.shape()) + " (input columns must equal weight rows)");
  }
  const ExecContext& ctx = tape.ctx();
  const Device device = x.value().device();
  const Tensor b = bias.defined() ? bias.value() : Tensor();
  Tensor y;
  {
    FS_ASSIGN_OR_RETURN(Tensor g, EmptyF32(device, x.shape()));  // freed at the end of the block
    FS_RETURN_IF_ERROR(kernels::Gelu(ctx, form, x.value(), b, &g));
    FS_ASSIGN_OR_RETURN(y, EmptyF32(device, {x.shape()[0], w.shape()[1]}));
    FS_RETURN_IF_ERROR(kernels::Gemm(ctx, g, false, w.value(), false, 1.0f, 0.0f, &y));
  }
  std::vector<Var> inputs{x, w};
  if (bias.defined()) inputs.push_back(bias);
  return tape.RecordGrad(inputs, y, [x, bias, w, form](const ExecContext& ctx, const Tensor& gy) -> Status {
    const Device device = x.value().device();
    const Tensor b = bias.defined() ? bias.value() : Tensor();
    if (w.requires_grad()) {  // dW = gelu(x + b)^T dY, the activation recomputed
      FS_ASSIGN_OR_RETURN(Tensor g, EmptyF32(device, x.shape()));
      FS_RETURN_IF_ERROR(kernels::Gelu(ctx, form, x.value(), b, &g));
      float beta;
      Tensor gw;
      FS_RETURN_IF_ERROR(internal::GradWithBeta(w, &gw, &beta));
      FS_RETURN_IF_ERROR(kernels::Gemm(ctx, g, true, gy, false, 1.0f, beta, &gw));
    }
    if (!x.requires_grad() && !(bias.defined() && bias.requires_grad())) return Status::OK();
    // dX = gelu'(x + b) * (dY W^T), computed in one buffer: x's gradient
    // itself when x has none yet (no copy), the bias's gradient its column sum.
    auto produce = [&](Tensor* gx) -> Status {
      FS_RETURN_IF_ERROR(kernels::Gemm(ctx, gy, false, w.value(), true, 1.0f, 0.0f, gx));
      FS_RETURN_IF_ERROR(kernels::GeluBackward(ctx, form, x.value(), b, *gx, gx));
      if (bias.defined() && bias.requires_grad()) {
        FS_RETURN_IF_ERROR(AccumulateWith(ctx, bias, [&](Tensor* gb) { return kernels::SumRows(ctx, *gx, gb); }));
      }
      return Status::OK();
    };
    if (x.requires_grad()) return AccumulateWith(ctx, x, produce);
    FS_ASSIGN_OR_RETURN(Tensor gx, EmptyF32(device, x.shape()));
    return produce(&gx);
  });
}

StatusOr<LayerNormOutputs> AddLayerNorm(Tape& tape, const Var& x, const Var& bias, const Var& residual,
                                        const Var& gamma, const Var& beta, float eps, bool overwrite_x) {
  FS_RETURN_IF_ERROR(CheckMatrix(x, "LayerNorm", "input"));
  if (!gamma.defined() || !beta.defined()) return InvalidArgument("LayerNorm: gamma and beta must be defined");
  const int64_t rows = x.shape()[0], cols = x.shape()[1];
  const Device device = x.value().device();
  const bool fused_sum = bias.defined() || residual.defined();
  FS_ASSIGN_OR_RETURN(Tensor y, EmptyF32(device, {rows, cols}));
  FS_ASSIGN_OR_RETURN(Tensor mean, EmptyF32(device, {rows}));
  FS_ASSIGN_OR_RETURN(Tensor rstd, EmptyF32(device, {rows}));
  Tensor h;
  if (fused_sum && overwrite_x) {
    h = x.value();
  } else if (fused_sum) {
    FS_ASSIGN_OR_RETURN(h, EmptyF32(device, {rows, cols}));
  }
  FS_RETURN_IF_ERROR(kernels::LayerNorm(tape.ctx(), x.value(), bias.defined() ? bias.value() : Tensor(),
                                        residual.defined() ? residual.value() : Tensor(), gamma.value(),
                                        beta.value(), eps, fused_sum ? &h : nullptr, &y, &mean, &rstd));
  LayerNormOutputs result;
  // Two nodes from one kernel call: h = x + bias + residual (a pass-through
  // backward), then out = LN(h), so h's gradient gathers LN's and that of
  // any other use of h (the residual stream of a pre-norm layer).
  if (fused_sum) {
    std::vector<Var> inputs{x};
    if (bias.defined()) inputs.push_back(bias);
    if (residual.defined()) inputs.push_back(residual);
    result.sum = tape.RecordGrad(inputs, h, [x, bias, residual](const ExecContext& ctx, const Tensor& g) -> Status {
      if (x.requires_grad()) FS_RETURN_IF_ERROR(x.AccumulateGrad(ctx, g));
      if (residual.defined() && residual.requires_grad()) FS_RETURN_IF_ERROR(residual.AccumulateGrad(ctx, g));
      if (bias.defined() && bias.requires_grad()) {
        FS_RETURN_IF_ERROR(AccumulateWith(ctx, bias, [&](Tensor* gb) { return kernels::SumRows(ctx, g, gb); }));
      }
      return Status::OK();
    });
  } else {
    result.sum = x;
  }
  const Var hv = result.sum;
  result.out = tape.RecordGrad({hv, gamma, beta}, y, [hv, gamma, beta, mean, rstd](const ExecContext& ctx,
                                                                                   const Tensor& gy) -> Status {
    const int64_t cols = hv.shape()[1];
    const Device device = hv.value().device();
    FS_ASSIGN_OR_RETURN(Tensor gg, EmptyF32(device, {cols}));
    FS_ASSIGN_OR_RETURN(Tensor gb, EmptyF32(device, {cols}));
    auto run = [&](Tensor* gh) {
      return kernels::LayerNormBackward(ctx, hv.value(), gamma.value(), mean, rstd, gy, gh, &gg, &gb);
    };
    if (hv.requires_grad()) {
      FS_RETURN_IF_ERROR(AccumulateWith(ctx, hv, run));
    } else {
      FS_ASSIGN_OR_RETURN(Tensor gh, EmptyF32(device, hv.shape()));
      FS_RETURN_IF_ERROR(run(&gh));
    }
    if (gamma.requires_grad()) FS_RETURN_IF_ERROR(gamma.AccumulateGrad(ctx, gg));
    if (beta.requires_grad()) FS_RETURN_IF_ERROR(beta.AccumulateGrad(ctx, gb));
    return Status::OK();
  });
  return result;
}

}  // namespace foresight::autograd
