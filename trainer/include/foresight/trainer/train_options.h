// TrainOptions: everything `foresight train` (and a C++ caller of
// trainer::Train) can set for node-classification training of a GNN. A plain
// struct; fields carry their defaults. Validate() before use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::trainer {

struct TrainOptions {
  // Dataset directory (storage::Dataset layout). Required.
  std::string dataset;
  // Model: "sage" (GraphSAGE, mean aggregator), "gcn" or "gat". Default: sage
  std::string model = "sage";
  // Number of passes over the training ids. Default: 200
  int epochs = 200;
  // Training seeds per mini-batch (ignored with full_graph). Default: 1024
  int64_t batch_size = 1024;
  // Neighbours sampled per layer, seeds outward (fanouts[0] is the hop next
  // to the seeds); -1 takes all neighbours. One entry per layer; ignored with
  // full_graph. Default: {15, 10}
  std::vector<int64_t> fanouts = {15, 10};
  // Train on the whole graph: one block per layer, one step per epoch over all
  // training ids. Default: false (mini-batches of sampled neighbourhoods)
  bool full_graph = false;
  // Hidden width (per head for gat). Default: 64
  int64_t hidden = 64;
  // Message-passing layers. Default: 2
  int layers = 2;
  // Attention heads of gat's hidden layers (the output layer has 1). Default: 8
  int heads = 8;
  // Learning rate. Default: 0.01
  float lr = 0.01f;
  // L2 penalty (coupled for adam and sgd, decoupled for adamw), applied to
  // every parameter. Default: 5e-4
  float weight_decay = 5e-4f;
  // Dropout probability on every layer's input, and on gat's attention
  // coefficients. Default: 0.5
  float dropout = 0.5f;
  // "adam", "adamw" or "sgd". Default: adam
  std::string optimizer = "adam";
  // Stop after this many epochs without a better validation accuracy; 0 never
  // stops early. Default: 0
  int patience = 0;
  // Seeds initialisation, dropout, seed order and sampling. Default: 0
  uint64_t seed = 0;
  // CPU threads; 0 = online CPUs. Results do not depend on it. Default: 0
  int threads = 0;
  // JSON-lines metrics file, one line per epoch and a final line; "" = none.
  // Default: ""
  std::string metrics_file;
  // Checkpoint directory, written after every epoch; "" = none. Default: ""
  std::string checkpoint_dir;
  // Continue from the last epoch completed in checkpoint_dir (which must hold
  // a checkpoint of the same configuration; epochs may grow). The metrics
  // file is appended to. Default: false
  bool resume = false;
  // Destination nodes per chunk in layer-wise full-neighbour inference
  // (evaluation of mini-batch models). gcn evaluates each layer over the whole
  // graph at once instead, since its symmetric normalisation needs every
  // node's full out-degree. Default: 4096
  int64_t eval_batch_size = 4096;
  // Print a progress line per epoch (and batch) on the terminal. Default: true
  bool progress = true;

  // Checks ranges and combinations; the message names the option.
  Status Validate() const;
};

}  // namespace foresight::trainer
