#include <string>

#include "../internal.h"
#include "foresight/autograd/functional.h"
#include "foresight/autograd/transformer.h"

namespace foresight::autograd {

MultiHeadAttention::MultiHeadAttention(const std::string& name, const AttentionConfig& config, RngKey init)
    : Module(name), config_(config) {
  const int64_t e = config.hidden > 0 ? config.hidden : 0;  // Forward rejects bad sizes
  qkv_weight_ = AddParameter("qkv_weight", GlorotUniform({e, 3 * e}, e, e, init.Fold(1)));
  qkv_bias_ = AddParameter("qkv_bias", Tensor::Zeros({3 * e}, DType::kF32));
  out_weight_ = AddParameter("out_weight", GlorotUniform({e, e}, e, e, init.Fold(2)));
  out_bias_ = AddParameter("out_bias", Tensor::Zeros({e}, DType::kF32));
}

StatusOr<Var> MultiHeadAttention::ForwardNoOutputBias(Tape& tape, const Var& x, const PackedSequences& packed) {
  const std::string op = name().empty() ? "MultiHeadAttention" : "MultiHeadAttention " + name();
  if (config_.hidden <= 0 || config_.heads <= 0 || config_.hidden % config_.heads != 0) {
    return InvalidArgument(op + ": hidden (" + std::to_string(config_.hidden) + ") must be a positive multiple of heads (" +
                           std::to_string(config_.heads) + ")");
  }
  FS_RETURN_IF_ERROR(internal::CheckMatrix(x, op, "input"));
  if (x.shape()[1] != config_.hidden) {
    return InvalidArgument(op + ": input " + ShapeToString(x.shape()) + " does not have " +
                           std::to_string(config_.hidden) + " columns");
  }
  FS_ASSIGN_OR_RETURN(Var qkv, internal::LinearOp(tape, x, qkv_weight_->var(), qkv_bias_->var(), op.c_str()));
  kernels::AttentionOptions opts;
  opts.heads = config_.heads;
  opts.causal = config_.causal;
  opts.dropout = config_.attn_dropout;
  FS_ASSIGN_OR_RETURN(Var a, VarlenSelfAttention(tape, qkv, packed, opts));
  return MatMul(tape, a, out_weight_->var());
}

StatusOr<Var> MultiHeadAttention::Forward(Tape& tape, const Var& x, const PackedSequences& packed) {
  FS_ASSIGN_OR_RETURN(Var y, ForwardNoOutputBias(tape, x, packed));
  return AddBias(tape, y, out_bias_->var());
}

}  // namespace foresight::autograd
