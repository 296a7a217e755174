#include "dlrm_model.h"

#include <memory>
#include <string>

#include "foresight/autograd/functional.h"
#include "foresight/autograd/keyed_dropout.h"

namespace foresight::trainer::internal {

namespace {

RngKey LayerKey(uint64_t seed, int layer) {
  return RngKey::FromSeed(seed).Fold(static_cast<uint64_t>(RngPurpose::kInit)).Fold(static_cast<uint64_t>(layer));
}

}  // namespace

DlrmModel::DlrmModel(const DlrmConfig& config) : config_(config) {
  int layer = 0;
  int64_t in = config.num_dense;
  for (size_t i = 0; i < config.bottom_mlp.size(); ++i) {
    const int64_t out = config.bottom_mlp[i];
    bottom_.push_back(AddChild(std::make_unique<autograd::Linear>("bottom" + std::to_string(i), in, out,
                                                                  /*bias=*/true, LayerKey(config.seed, layer++))));
    in = out;
  }
  in = kernels::InteractionWidth(config.interaction, config.num_tables, in, config.embedding_dim);
  for (size_t i = 0; i < config.top_mlp.size(); ++i) {
    const int64_t out = config.top_mlp[i];
    top_.push_back(AddChild(std::make_unique<autograd::Linear>("top" + std::to_string(i), in, out,
                                                               /*bias=*/true, LayerKey(config.seed, layer++))));
    in = out;
  }
}

StatusOr<autograd::Var> DlrmModel::Forward(autograd::Tape& tape, const autograd::Var& dense,
                                           const autograd::Var& emb, int64_t first_row) {
  // Global rows first_row..: at 0 the masks are those of plain Dropout.
  Tensor rows;
  if (tape.training() && config_.dropout > 0.0f) {
    const int64_t n = dense.shape()[0];
    rows = Tensor::Empty({n}, DType::kI64);
    int64_t* r = rows.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) r[i] = first_row + i;
  }
  autograd::Var h = dense;
  if (!tape.training() || config_.dropout == 0.0f) {
    // No dropout between the layers: each MLP as one node, whose backward
    // takes every ReLU mask on the tiles of the GEMM above it (the same
    // bits as the layer-by-layer path below).
    FS_ASSIGN_OR_RETURN(h, autograd::LinearReluChain(tape, h, bottom_, /*relu_last=*/true));
    FS_ASSIGN_OR_RETURN(h, autograd::FeatureInteraction(tape, config_.interaction, config_.num_tables, h, emb));
    return autograd::LinearReluChain(tape, h, top_, /*relu_last=*/false);
  }
  // Linear + ReLU as one node each (ForwardRelu: the same bits, one pass
  // fewer each way), dropout after each.
  for (autograd::Linear* layer : bottom_) {
    FS_ASSIGN_OR_RETURN(h, layer->ForwardRelu(tape, h));
    FS_ASSIGN_OR_RETURN(h, autograd::Dropout(tape, h, config_.dropout, rows));
  }
  FS_ASSIGN_OR_RETURN(h, autograd::FeatureInteraction(tape, config_.interaction, config_.num_tables, h, emb));
  for (size_t i = 0; i < top_.size(); ++i) {
    if (i + 1 == top_.size()) {  // the logit
      FS_ASSIGN_OR_RETURN(h, top_[i]->Forward(tape, h));
      break;
    }
    FS_ASSIGN_OR_RETURN(h, top_[i]->ForwardRelu(tape, h));
    FS_ASSIGN_OR_RETURN(h, autograd::Dropout(tape, h, config_.dropout, rows));
  }
  return h;
}

}  // namespace foresight::trainer::internal
