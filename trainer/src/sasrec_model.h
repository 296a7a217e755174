// SASRec's dense part (Kang & McAuley, ICDM 2018) on packed sequences: item
// embeddings (rows of the embed/ item table, handed in as a Var) scaled by
// sqrt(hidden) plus learned positional embeddings, dropout, `blocks` causal
// pre-norm transformer blocks (the feed-forward as wide as the hidden
// layer) and a final LayerNorm. Its loss is the authors': binary cross
// entropy of each position's next item against one sampled negative.
// Private to the trainer.
#pragma once

#include <cstdint>

#include "foresight/autograd/module.h"
#include "foresight/autograd/transformer.h"

namespace foresight::trainer::internal {

struct SasrecConfig {
  int64_t hidden = 50;
  int64_t heads = 1;
  int blocks = 2;
  int64_t max_length = 50;
  float dropout = 0.5f;  // on the input embeddings, inside the blocks and on attention weights
  uint64_t seed = 0;
};

class SasrecModel : public autograd::Module {
 public:
  explicit SasrecModel(const SasrecConfig& config);
  // items [T, hidden] (the input tokens' item rows), positions i64 [T] in
  // [0, max_length) -> [T, hidden], each token's state after the blocks.
  StatusOr<autograd::Var> Forward(autograd::Tape& tape, const autograd::Var& items, const Tensor& positions,
                                  const autograd::PackedSequences& packed);
  const SasrecConfig& config() const { return config_; }

 private:
  SasrecConfig config_;
  autograd::Parameter* positions_;  // [max_length, hidden]
  std::vector<autograd::TransformerEncoderLayer*> blocks_;
  autograd::LayerNorm* final_norm_;
};

// mean over tokens of -log sigmoid(h . pos) - log(1 - sigmoid(h . neg)),
// h, pos, neg [T, hidden]; a scalar with gradients into all three.
StatusOr<autograd::Var> NextItemBceLoss(autograd::Tape& tape, const autograd::Var& h, const autograd::Var& pos,
                                        const autograd::Var& neg);

}  // namespace foresight::trainer::internal
