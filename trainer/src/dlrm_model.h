// The dense half of DLRM (Naumov et al. 2019): a bottom MLP over the dense
// features, the interaction of its output with the pooled embeddings of
// the categorical fields, and a top MLP giving one click logit per sample.
// The embedding tables (the sparse half) live in an
// embed::EmbeddingBagCollection owned by the runner; this module's
// Parameters() are the dense ones, trained by a dense optimizer. Private to
// the trainer.
#pragma once

#include <cstdint>
#include <vector>

#include "foresight/autograd/layers.h"
#include "foresight/autograd/module.h"
#include "foresight/kernels/ops.h"

namespace foresight::trainer::internal {

struct DlrmConfig {
  int64_t num_dense = 0;   // dense features a sample
  int64_t num_tables = 0;  // categorical fields
  int64_t embedding_dim = 0;
  std::vector<int64_t> bottom_mlp;  // widths; Linear + ReLU each
  std::vector<int64_t> top_mlp;     // widths, the last 1; ReLU between layers
  kernels::Interaction interaction = kernels::Interaction::kDot;
  float dropout = 0.0f;  // on every hidden activation of both MLPs
  uint64_t seed = 0;     // weights Glorot-uniform from (seed, layer); biases 0
};

class DlrmModel : public autograd::Module {
 public:
  explicit DlrmModel(const DlrmConfig& config);
  const DlrmConfig& config() const { return config_; }
  // dense [B, num_dense], emb [B, num_tables * embedding_dim] (the pooled
  // tables) -> logits [B, 1]. The B samples are rows first_row.. of the
  // global batch (a rank's part): dropout keys its masks by that global
  // row, so the parts of several ranks draw the one-rank batch's masks.
  StatusOr<autograd::Var> Forward(autograd::Tape& tape, const autograd::Var& dense, const autograd::Var& emb,
                                  int64_t first_row = 0);

 private:
  DlrmConfig config_;
  std::vector<autograd::Linear*> bottom_;
  std::vector<autograd::Linear*> top_;
};

}  // namespace foresight::trainer::internal
