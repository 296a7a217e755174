#include <string>

#include "../internal.h"
#include "foresight/autograd/functional.h"
#include "foresight/autograd/transformer.h"

namespace foresight::autograd {

TransformerEncoderLayer::TransformerEncoderLayer(const std::string& name, const TransformerEncoderConfig& config,
                                                 RngKey init)
    : Module(name), config_(config) {
  const int64_t e = config.hidden > 0 ? config.hidden : 0, f = config.ffn > 0 ? config.ffn : 0;
  AttentionConfig ac;
  ac.hidden = config.hidden;
  ac.heads = config.heads;
  ac.causal = config.causal;
  ac.attn_dropout = config.attn_dropout;
  attention_ = AddChild(std::make_unique<MultiHeadAttention>(internal::JoinName(name, "attention"), ac, init.Fold(1)));
  norm1_ = AddChild(std::make_unique<LayerNorm>(internal::JoinName(name, "norm1"), e, config.eps));
  norm2_ = AddChild(std::make_unique<LayerNorm>(internal::JoinName(name, "norm2"), e, config.eps));
  ffn1_weight_ = AddParameter("ffn1_weight", GlorotUniform({e, f}, e, f, init.Fold(2)));
  ffn1_bias_ = AddParameter("ffn1_bias", Tensor::Zeros({f}, DType::kF32));
  ffn2_weight_ = AddParameter("ffn2_weight", GlorotUniform({f, e}, f, e, init.Fold(3)));
  ffn2_bias_ = AddParameter("ffn2_bias", Tensor::Zeros({e}, DType::kF32));
}

StatusOr<Var> TransformerEncoderLayer::BiasDropout(Tape& tape, const Var& v, const Var& bias, Var* fused_bias) {
  if (tape.training() && config_.dropout > 0.0f) {
    *fused_bias = Var();
    FS_ASSIGN_OR_RETURN(Var b, AddBias(tape, v, bias));
    return Dropout(tape, b, config_.dropout);
  }
  *fused_bias = bias;
  return v;
}

StatusOr<Var> TransformerEncoderLayer::Forward(Tape& tape, const Var& x, const PackedSequences& packed) {
  const std::string op = name().empty() ? "TransformerEncoderLayer" : "TransformerEncoderLayer " + name();
  if (config_.ffn <= 0) return InvalidArgument(op + ": ffn must be positive, got " + std::to_string(config_.ffn));
  if (!(config_.dropout >= 0.0f && config_.dropout < 1.0f)) {
    return InvalidArgument(op + ": dropout must be in [0, 1), got " + std::to_string(config_.dropout));
  }
  Var bias;
  if (config_.norm_first) {
    // z = x + MHA(LN1(x)); y = z + FFN(LN2(z)); the first sum is LN2's fused input.
    FS_ASSIGN_OR_RETURN(LayerNormOutputs n1, norm1_->Forward(tape, x));
    FS_ASSIGN_OR_RETURN(Var a, attention_->ForwardNoOutputBias(tape, n1.out, packed));
    FS_ASSIGN_OR_RETURN(a, BiasDropout(tape, a, attention_->out_bias()->var(), &bias));
    FS_ASSIGN_OR_RETURN(LayerNormOutputs n2, norm2_->Forward(tape, a, bias, x, /*overwrite_x=*/true));
    FS_ASSIGN_OR_RETURN(Var f1, MatMul(tape, n2.out, ffn1_weight_->var()));
    FS_ASSIGN_OR_RETURN(Var f2, GeluMatMul(tape, f1, ffn1_bias_->var(), ffn2_weight_->var(), config_.gelu));
    FS_ASSIGN_OR_RETURN(f2, BiasDropout(tape, f2, ffn2_bias_->var(), &bias));
    if (bias.defined()) {
      FS_ASSIGN_OR_RETURN(f2, AddBias(tape, f2, bias));
    }
    return Add(tape, n2.sum, f2);
  }
  // z = LN1(x + MHA(x)); y = LN2(z + FFN(z)), each bias and residual fused into its LayerNorm.
  FS_ASSIGN_OR_RETURN(Var a, attention_->ForwardNoOutputBias(tape, x, packed));
  FS_ASSIGN_OR_RETURN(a, BiasDropout(tape, a, attention_->out_bias()->var(), &bias));
  FS_ASSIGN_OR_RETURN(LayerNormOutputs n1, norm1_->Forward(tape, a, bias, x, /*overwrite_x=*/true));
  FS_ASSIGN_OR_RETURN(Var f1, MatMul(tape, n1.out, ffn1_weight_->var()));
  FS_ASSIGN_OR_RETURN(Var f2, GeluMatMul(tape, f1, ffn1_bias_->var(), ffn2_weight_->var(), config_.gelu));
  FS_ASSIGN_OR_RETURN(f2, BiasDropout(tape, f2, ffn2_bias_->var(), &bias));
  FS_ASSIGN_OR_RETURN(LayerNormOutputs n2, norm2_->Forward(tape, f2, bias, n1.out, /*overwrite_x=*/true));
  return n2.out;
}

}  // namespace foresight::autograd
