// Link prediction with a GNN encoder (TrainOptions::task = "link", model
// sage, gcn or gat), private to the trainer: trainer::Train hands such a
// task here.
#pragma once

#include <string>

#include "foresight/core/status.h"
#include "foresight/trainer/trainer.h"

namespace foresight::trainer::internal {

// True for the models TrainLinkGnn trains (sage, gcn, gat).
bool IsGnnLinkModel(const std::string& model);

// Trains a GNN encoder on the graph of options.dataset (which must hold
// only training edges: a validation or test edge in it is refused, naming
// it) with a dot or DistMult decoder (options.link_decoder) on the
// triples of storage::LinkTriples:
//   a step takes a batch of positives and its chunks' negatives (the
//   shallow models' LinkBatcher), samples one subgraph around all their
//   distinct endpoints (sampler::NeighborSampler, options.fanouts), runs
//   the encoder over it from the input rows options.node_features names,
//   scores the endpoints' embeddings with the shared chunk loss
//   (link_loss.h) and backpropagates into the encoder, the decoder's
//   relation rows and learned input rows;
//   evaluation computes every node's embedding by layer-wise full-neighbour
//   inference (no sampling, no dropout), then ranks every entity for each
//   query, filtered, as the shallow models do.
// Options must be valid (ValidateLink).
Status TrainLinkGnn(const TrainOptions& options, const TrainCallbacks& callbacks, TrainSummary* out);

}  // namespace foresight::trainer::internal
