// Transformer layers on packed variable-length sequences: a batch is its
// sequences' tokens concatenated ([T, E], no padding) plus PackedSequences,
// which says where each sequence starts. MultiHeadAttention and
// TransformerEncoderLayer run on the fused kernels of
// foresight/kernels/transformer.h (varlen attention, LayerNorm with bias and
// residual, GELU) and the existing Gemm, and record one tape node per fused
// op, so a user composes models from them without writing backward code.
#pragma once

#include <cstdint>
#include <vector>

#include "foresight/autograd/module.h"
#include "foresight/autograd/tape.h"
#include "foresight/kernels/transformer.h"

namespace foresight::autograd {

// Where each sequence of a packed batch starts: cu_seqlens (i64 [B + 1],
// prefix sums of the lengths) on the batch's device, a host copy of the
// offsets, and the longest length. Immutable; cheap to copy (shared).
class PackedSequences {
 public:
  PackedSequences() = default;
  // Lengths >= 0 (a length 0 sequence is allowed and has no tokens);
  // InvalidArgument naming the first negative one.
  static StatusOr<PackedSequences> FromLengths(const std::vector<int64_t>& lengths, Device device = Device::Cpu());
  // Offsets [B + 1] as cu_seqlens: 0 first, non-decreasing.
  static StatusOr<PackedSequences> FromOffsets(const std::vector<int64_t>& offsets, Device device = Device::Cpu());

  int64_t batch() const { return static_cast<int64_t>(offsets_.size()) - 1; }
  int64_t total_tokens() const { return offsets_.empty() ? 0 : offsets_.back(); }
  int64_t max_seqlen() const { return max_seqlen_; }
  int64_t length(int64_t b) const { return offsets_[b + 1] - offsets_[b]; }
  const std::vector<int64_t>& offsets() const { return offsets_; }
  const Tensor& cu_seqlens() const { return cu_seqlens_; }

 private:
  std::vector<int64_t> offsets_{0};
  int64_t max_seqlen_ = 0;
  Tensor cu_seqlens_;
};

// ---- differentiable ops ----

// Self-attention from a fused projection qkv [T, 3E] (columns: q, k, v, each
// H heads of E / H) to [T, E]. Dropout on the weights only when the tape is
// training (its key from tape.NextRngKey()). Keeps qkv, the output and the
// per-row log-sum-exp for backward, never a score matrix.
StatusOr<Var> VarlenSelfAttention(Tape& tape, const Var& qkv, const PackedSequences& packed,
                                  const kernels::AttentionOptions& options);

// gelu(x + bias) (bias [F] optional: an undefined Var); backward from x.
StatusOr<Var> Gelu(Tape& tape, const Var& x, const Var& bias, kernels::GeluForm form);

// h = x + bias + residual (each of bias [E] and residual [T, E] optional)
// and out = LayerNorm(h) * gamma + beta, in one kernel. `sum` is h (x
// itself when neither bias nor residual is given): the residual stream of a
// pre-norm layer. With overwrite_x, h is written over x's value, saving a
// [T, E] buffer: only for an x whose value no backward reads (a matmul's
// output used nowhere else: the matmul's backward reads its inputs only).
struct LayerNormOutputs {
  Var sum;
  Var out;
};
StatusOr<LayerNormOutputs> AddLayerNorm(Tape& tape, const Var& x, const Var& bias, const Var& residual,
                                        const Var& gamma, const Var& beta, float eps, bool overwrite_x = false);

// y = gelu(x + bias) w, x [N, F], bias [F] (optional), w [F, M]: the
// feed-forward block's second half. The activation is not kept: the
// backward recomputes it from x (as Tempo does), so the layer holds one
// [N, F] tensor where GELU then MatMul would hold two.
StatusOr<Var> GeluMatMul(Tape& tape, const Var& x, const Var& bias, const Var& w, kernels::GeluForm form);

// ---- layers ----

// LayerNorm over the last dimension with learnable gamma (ones) and beta
// (zeros).
class LayerNorm : public Module {
 public:
  LayerNorm(const std::string& name, int64_t features, float eps = 1e-5f);
  // out = LayerNorm(x + bias + residual) (bias and residual optional).
  StatusOr<LayerNormOutputs> Forward(Tape& tape, const Var& x, const Var& bias = Var(),
                                     const Var& residual = Var(), bool overwrite_x = false);
  Parameter* gamma() const { return gamma_; }
  Parameter* beta() const { return beta_; }

 private:
  float eps_;
  Parameter* gamma_;
  Parameter* beta_;
};

struct AttentionConfig {
  int64_t hidden = 0;          // E; a multiple of heads
  int64_t heads = 1;           // H
  bool causal = false;         // each token sees only earlier tokens of its sequence
  float attn_dropout = 0.0f;   // on the attention weights (training only). Default: 0
};

// Multi-head self-attention on packed input x [T, E]: one fused QKV
// projection (weight [E, 3E] + bias) on Gemm, varlen attention, the output
// projection (weight [E, E] + bias).
class MultiHeadAttention : public Module {
 public:
  MultiHeadAttention(const std::string& name, const AttentionConfig& config, RngKey init);
  // [T, E] -> [T, E], output bias included.
  StatusOr<Var> Forward(Tape& tape, const Var& x, const PackedSequences& packed);
  // Without the output bias, for a caller that fuses it into what follows
  // (TransformerEncoderLayer adds it inside its LayerNorm kernel).
  StatusOr<Var> ForwardNoOutputBias(Tape& tape, const Var& x, const PackedSequences& packed);
  const AttentionConfig& config() const { return config_; }
  Parameter* out_bias() const { return out_bias_; }

 private:
  AttentionConfig config_;
  Parameter* qkv_weight_;  // [E, 3E]
  Parameter* qkv_bias_;    // [3E]
  Parameter* out_weight_;  // [E, E]
  Parameter* out_bias_;    // [E]
};

struct TransformerEncoderConfig {
  int64_t hidden = 0;           // E
  int64_t heads = 1;            // H, divides E
  int64_t ffn = 0;              // F, the feed-forward width
  bool causal = false;          // Default: bidirectional
  bool norm_first = false;      // pre-norm (GPT, SASRec) when true; post-norm (BERT) when false
  float dropout = 0.0f;         // after attention and feed-forward (training only). Default: 0
  float attn_dropout = 0.0f;    // on the attention weights (training only). Default: 0
  kernels::GeluForm gelu = kernels::GeluForm::kErf;
  float eps = 1e-5f;            // LayerNorm's. Default: 1e-5
};

// One encoder block on packed input x [T, E]:
//   post-norm: y = LN2(z + FFN(z)), z = LN1(x + MHA(x))
//   pre-norm:  z = x + MHA(LN1(x)), y = z + FFN(LN2(z))
// with FFN(u) = W2 gelu(W1 u + b1) + b2 and dropout after MHA and FFN.
// Each residual add goes into the LayerNorm kernel with its bias.
class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer(const std::string& name, const TransformerEncoderConfig& config, RngKey init);
  StatusOr<Var> Forward(Tape& tape, const Var& x, const PackedSequences& packed);
  const TransformerEncoderConfig& config() const { return config_; }

 private:
  // Dropout (training) of v + bias, or v with the bias left to the caller
  // when there is no dropout: *fused_bias says which.
  StatusOr<Var> BiasDropout(Tape& tape, const Var& v, const Var& bias, Var* fused_bias);

  TransformerEncoderConfig config_;
  MultiHeadAttention* attention_;
  LayerNorm* norm1_;
  LayerNorm* norm2_;
  Parameter* ffn1_weight_;  // [E, F]
  Parameter* ffn1_bias_;    // [F]
  Parameter* ffn2_weight_;  // [F, E]
  Parameter* ffn2_bias_;    // [E]
};

}  // namespace foresight::autograd
