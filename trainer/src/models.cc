#include "foresight/trainer/models.h"

#include <string>

#include "foresight/autograd/keyed_dropout.h"

namespace foresight::trainer {

using autograd::GraphBlock;
using autograd::Tape;
using autograd::Var;

namespace {

constexpr float kGatNegativeSlope = 0.2f;  // as in the GAT paper

std::string LayerName(int layer) { return "layers." + std::to_string(layer); }

}  // namespace

Status ModelConfig::Validate() const {
  if (kind != "sage" && kind != "gcn" && kind != "gat") {
    return InvalidArgument("model: '" + kind + "' is not one of sage, gcn, gat");
  }
  if (in_features < 1) {
    return InvalidArgument("model: in_features must be >= 1, got " + std::to_string(in_features));
  }
  if (num_classes < 1) {
    return InvalidArgument("model: num_classes must be >= 1, got " + std::to_string(num_classes));
  }
  if (hidden < 1) return InvalidArgument("model: hidden must be >= 1, got " + std::to_string(hidden));
  if (layers < 1) return InvalidArgument("model: layers must be >= 1, got " + std::to_string(layers));
  if (heads < 1) return InvalidArgument("model: heads must be >= 1, got " + std::to_string(heads));
  if (!(dropout >= 0.0f && dropout < 1.0f)) {
    return InvalidArgument("model: dropout must be in [0, 1), got " + std::to_string(dropout));
  }
  if (!(input_dropout < 1.0f)) {  // NaN too
    return InvalidArgument("model: input_dropout must be below 1 (negative: the dropout), got " +
                           std::to_string(input_dropout));
  }
  return Status::OK();
}

GnnModel::GnnModel(const ModelConfig& config) : config_(config) {
  if (config.input_table && config.in_features > 0 && config.hidden > 0) {
    // Initialised like an embedding table (Glorot over hidden x hidden), so
    // the scale of a row does not shrink with the number of features.
    input_table_ = AddParameter("input.weight",
                                autograd::GlorotUniform({config.in_features, config.hidden}, config.hidden,
                                                        config.hidden, LayerInitKey(-1)));
  }
}

RngKey GnnModel::LayerInitKey(int layer) const {
  return RngKey::FromSeed(config_.seed)
      .Fold(static_cast<uint64_t>(RngPurpose::kInit))
      .Fold(static_cast<uint64_t>(layer));
}

StatusOr<Var> GnnModel::ForwardLayer(Tape& tape, int layer, GraphBlock& block, const Var& x) {
  FS_ASSIGN_OR_RETURN(Var h, autograd::Dropout(tape, x, config_.InputDropout(layer), block.SourceIds(x.shape()[0])));
  FS_ASSIGN_OR_RETURN(h, Convolve(tape, layer, block, h));
  if (layer != num_layers() - 1) {
    FS_ASSIGN_OR_RETURN(h, ReluBetweenLayers() ? autograd::Relu(tape, h) : autograd::Elu(tape, h));
  }
  return h;
}

StatusOr<Var> GnnModel::Forward(Tape& tape, std::vector<GraphBlock*>& blocks, const Var& x,
                                const RngKey* x_dropped) {
  if (static_cast<int>(blocks.size()) != num_layers()) {
    return InvalidArgument("model forward: got " + std::to_string(blocks.size()) +
                           " blocks for a model of " + std::to_string(num_layers()) + " layers");
  }
  const auto check_input = [&](int l, const Var& h) -> Status {
    if (blocks[l] == nullptr) return InvalidArgument("model forward: block " + std::to_string(l) + " is null");
    if (h.shape()[0] != blocks[l]->num_src()) {
      return InvalidArgument("model forward: layer " + std::to_string(l) + " input has " +
                             std::to_string(h.shape()[0]) + " rows but its block has " +
                             std::to_string(blocks[l]->num_src()) + " sources");
    }
    return Status::OK();
  };
  // ForwardLayer's ops in its order, so the tape draws the same keys; only
  // layer l's ReLU and layer l + 1's dropout are one ReluDropout
  // (`dropped`: h is the next layer's dropped input already).
  Var h = x;
  bool dropped = false;
  if (x_dropped != nullptr) {
    FS_RETURN_IF_ERROR(check_input(0, h));
    if (!tape.training() || config_.InputDropout(0) == 0.0f) {
      return InvalidArgument("model forward: the input comes dropped out, but this step drops none (training " +
                             std::string(tape.training() ? "on" : "off") + ", input dropout " +
                             std::to_string(config_.InputDropout(0)) + ")");
    }
    if (x.requires_grad()) return InvalidArgument("model forward: a dropped-out input cannot take a gradient");
    const RngKey key = tape.NextRngKey();  // layer 0's dropout's draw
    if (key.key != x_dropped->key) {
      return Internal("model forward: the input was dropped out with another key than this step's first");
    }
    dropped = true;
  }
  for (int l = 0; l < num_layers(); ++l) {
    if (!dropped) {
      FS_RETURN_IF_ERROR(check_input(l, h));
      FS_ASSIGN_OR_RETURN(h, autograd::Dropout(tape, h, config_.InputDropout(l), blocks[l]->SourceIds(h.shape()[0])));
    }
    FS_ASSIGN_OR_RETURN(h, Convolve(tape, l, *blocks[l], h));
    dropped = false;
    if (l == num_layers() - 1) break;
    if (ReluBetweenLayers()) {
      FS_RETURN_IF_ERROR(check_input(l + 1, h));
      FS_ASSIGN_OR_RETURN(
          h, autograd::ReluDropout(tape, h, config_.InputDropout(l + 1), blocks[l + 1]->SourceIds(h.shape()[0])));
      dropped = true;
    } else {
      FS_ASSIGN_OR_RETURN(h, autograd::Elu(tape, h));
    }
  }
  return h;
}

// ---- GraphSAGE ----

GraphSage::GraphSage(const ModelConfig& config) : GnnModel(config) {
  for (int l = 0; l < config.layers; ++l) {
    convs_.push_back(AddChild(std::make_unique<autograd::SAGEConv>(
        LayerName(l), LayerInputDim(l), LayerOutputDim(l), LayerInitKey(l))));
  }
}

int64_t GraphSage::LayerOutputDim(int layer) const {
  return layer == num_layers() - 1 ? config_.num_classes : config_.hidden;
}

StatusOr<Var> GraphSage::Convolve(Tape& tape, int layer, GraphBlock& block, const Var& x) {
  return convs_[layer]->Forward(tape, block, x);
}

// ---- GCN ----

Gcn::Gcn(const ModelConfig& config) : GnnModel(config) {
  for (int l = 0; l < config.layers; ++l) {
    convs_.push_back(AddChild(std::make_unique<autograd::GCNConv>(
        LayerName(l), LayerInputDim(l), LayerOutputDim(l), LayerInitKey(l))));
  }
}

int64_t Gcn::LayerOutputDim(int layer) const {
  return layer == num_layers() - 1 ? config_.num_classes : config_.hidden;
}

StatusOr<Var> Gcn::Convolve(Tape& tape, int layer, GraphBlock& block, const Var& x) {
  return convs_[layer]->Forward(tape, block, x);
}

// ---- GAT ----

Gat::Gat(const ModelConfig& config) : GnnModel(config) {
  for (int l = 0; l < config.layers; ++l) {
    const bool last = l == config.layers - 1;
    convs_.push_back(AddChild(std::make_unique<autograd::GATConv>(
        LayerName(l), LayerInputDim(l), last ? config.num_classes : config.hidden,
        last ? 1 : config.heads, /*concat=*/!last, kGatNegativeSlope, config.dropout,
        LayerInitKey(l))));
  }
}

int64_t Gat::LayerOutputDim(int layer) const {
  return layer == num_layers() - 1 ? config_.num_classes : config_.hidden * config_.heads;
}

StatusOr<Var> Gat::Convolve(Tape& tape, int layer, GraphBlock& block, const Var& x) {
  return convs_[layer]->Forward(tape, block, x);
}

StatusOr<std::unique_ptr<GnnModel>> CreateModel(const ModelConfig& config) {
  FS_RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<GnnModel> model;
  if (config.kind == "sage") {
    model = std::make_unique<GraphSage>(config);
  } else if (config.kind == "gcn") {
    model = std::make_unique<Gcn>(config);
  } else {
    model = std::make_unique<Gat>(config);
  }
  return model;
}

}  // namespace foresight::trainer
