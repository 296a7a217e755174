// The node-classification GNNs: GraphSAGE (mean), GCN and GAT, built from
// autograd layers. Each model is a stack of message-passing layers; a layer
// applies dropout to its input, its convolution, and a non-linearity (ReLU,
// ELU for GAT) unless it is the last. Models run either over sampled blocks
// (mini-batch), the full graph as one block per layer, or one layer at a time
// (layer-wise inference).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "foresight/autograd/graph_block.h"
#include "foresight/autograd/layers.h"
#include "foresight/autograd/module.h"
#include "foresight/autograd/tape.h"
#include "foresight/core/status.h"

namespace foresight::trainer {

// What a model's shape and initialisation depend on (checkpoints store it).
struct ModelConfig {
  std::string kind = "sage";  // sage | gcn | gat. Default: sage
  int64_t in_features = 0;    // input feature width. Required
  int64_t num_classes = 0;    // output width. Required
  int64_t hidden = 64;        // per head for gat. Default: 64
  int layers = 2;             // Default: 2
  int heads = 8;              // gat hidden layers. Default: 8
  float dropout = 0.5f;       // layer inputs (and gat attention). Default: 0.5
  // The first layer's input; negative: dropout. Default: -1
  float input_dropout = -1.0f;
  // The dropout probability of layer `layer`'s input.
  float InputDropout(int layer) const { return layer == 0 && input_dropout >= 0.0f ? input_dropout : dropout; }
  uint64_t seed = 0;          // parameter init. Default: 0
  // Where the node features come from (TrainOptions::node_features): file |
  // degree | one-hot. Default: file
  std::string node_features = "file";
  // The model begins with a learnable input table W [in_features, hidden]
  // ("input.weight"): its input is a sparse row x per node (sparse feature
  // rows, or e_v for one-hot) and layer 0 reads x W, computed as a weighted
  // sum of W's rows (an embedding bag) so no dense N x in_features matrix
  // exists. Default: false (layer 0 reads the in_features-wide rows)
  bool input_table = false;

  Status Validate() const;
};

// Base of the models: a stack of `num_layers()` layers. Not thread-safe.
class GnnModel : public autograd::Module {
 public:
  explicit GnnModel(const ModelConfig& config);
  const ModelConfig& config() const { return config_; }
  int num_layers() const { return config_.layers; }
  // Width of layer `layer`'s output (hidden * heads for gat hidden layers,
  // num_classes for the last).
  virtual int64_t LayerOutputDim(int layer) const = 0;
  // Input width of layer `layer` (layer 0 reads the input table's hidden
  // columns when there is one).
  int64_t LayerInputDim(int layer) const {
    if (layer == 0) return config_.input_table ? config_.hidden : config_.in_features;
    return LayerOutputDim(layer - 1);
  }
  // The input table [in_features, hidden], or null (config.input_table off).
  autograd::Parameter* input_table() const { return input_table_; }
  // True when a layer's output row depends on more than the row's own
  // in-edges (gcn: the normalisation uses each source's out-degree), so
  // layer-wise inference must see the whole graph per layer.
  virtual bool NeedsWholeGraphPerLayer() const { return false; }

  // Layer `layer` on `block`: x has block.num_src() rows (the destinations
  // first), the result block.num_dst() rows. Dropout of x (keyed by the
  // block's source ids) when tape.training(), the convolution, and the
  // non-linearity unless it is the last layer.
  StatusOr<autograd::Var> ForwardLayer(autograd::Tape& tape, int layer, autograd::GraphBlock& block,
                                       const autograd::Var& x);

  // All layers: blocks[0] consumes x (its num_src rows), blocks.back()
  // produces the logits. A full graph passes the same block for every layer.
  // The layers of ForwardLayer, except that a ReLU and the next layer's
  // dropout run as one op (autograd::ReluDropout): the same bits, a pass
  // less each way. x_dropped: x is layer 0's dropped-out input already
  // (the input pipeline gathered and dropped it, kernels::GatherRowsDropout)
  // with this key, which must be the one the tape draws for that dropout
  // (checked; the draw is taken so later layers' keys stay the same).
  StatusOr<autograd::Var> Forward(autograd::Tape& tape, std::vector<autograd::GraphBlock*>& blocks,
                                  const autograd::Var& x, const RngKey* x_dropped = nullptr);

 protected:
  // The init stream of layer `layer`: FromSeed(seed).Fold(kInit).Fold(layer).
  RngKey LayerInitKey(int layer) const;
  // Layer `layer`'s convolution alone: no dropout, no non-linearity.
  virtual StatusOr<autograd::Var> Convolve(autograd::Tape& tape, int layer, autograd::GraphBlock& block,
                                           const autograd::Var& x) = 0;
  // The non-linearity between layers: ReLU (true) or ELU.
  virtual bool ReluBetweenLayers() const { return true; }

  ModelConfig config_;
  autograd::Parameter* input_table_ = nullptr;
};

// GraphSAGE (Hamilton et al.) with mean aggregation and ReLU.
class GraphSage : public GnnModel {
 public:
  explicit GraphSage(const ModelConfig& config);
  int64_t LayerOutputDim(int layer) const override;

 protected:
  StatusOr<autograd::Var> Convolve(autograd::Tape& tape, int layer, autograd::GraphBlock& block,
                                   const autograd::Var& x) override;

 private:
  std::vector<autograd::SAGEConv*> convs_;
};

// GCN (Kipf & Welling) with ReLU.
class Gcn : public GnnModel {
 public:
  explicit Gcn(const ModelConfig& config);
  int64_t LayerOutputDim(int layer) const override;
  bool NeedsWholeGraphPerLayer() const override { return true; }

 protected:
  StatusOr<autograd::Var> Convolve(autograd::Tape& tape, int layer, autograd::GraphBlock& block,
                                   const autograd::Var& x) override;

 private:
  std::vector<autograd::GCNConv*> convs_;
};

// GAT (Velickovic et al.): hidden layers concatenate `heads` heads, the output
// layer has one head; ELU between layers; attention dropout = dropout.
class Gat : public GnnModel {
 public:
  explicit Gat(const ModelConfig& config);
  int64_t LayerOutputDim(int layer) const override;

 protected:
  StatusOr<autograd::Var> Convolve(autograd::Tape& tape, int layer, autograd::GraphBlock& block,
                                   const autograd::Var& x) override;
  bool ReluBetweenLayers() const override { return false; }

 private:
  std::vector<autograd::GATConv*> convs_;
};

// Validates `config` and builds the model it names.
StatusOr<std::unique_ptr<GnnModel>> CreateModel(const ModelConfig& config);

}  // namespace foresight::trainer
