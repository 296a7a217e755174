// TrainOptions::ValidateLinkGnn: what `foresight train --task link` checks
// beyond ValidateLink's common checks when the model is a GNN encoder.
#include <cmath>
#include <string>

#include "foresight/trainer/train_options.h"

namespace foresight::trainer {

Status TrainOptions::ValidateLinkGnn() const {
  if (link_decoder != "dot" && link_decoder != "distmult") {
    return InvalidArgument("decoder: '" + link_decoder + "' is not one of dot, distmult (task link, model " + model +
                           ")");
  }
  if (optimizer != "adam" && optimizer != "adamw" && optimizer != "sgd") {
    return InvalidArgument("optimizer: '" + optimizer + "' is not one of adam, adamw, sgd (the " + model +
                           " encoder's dense optimizer)");
  }
  if (!(lr > 0.0f) || !std::isfinite(lr)) {
    return InvalidArgument("lr: must be a positive number (the " + model + " encoder's dense optimizer), got " +
                           std::to_string(lr));
  }
  if (hidden < 1) return InvalidArgument("hidden: must be >= 1, got " + std::to_string(hidden));
  if (layers < 1) return InvalidArgument("layers: must be >= 1, got " + std::to_string(layers));
  if (model == "gat" && heads < 1) return InvalidArgument("heads: must be >= 1, got " + std::to_string(heads));
  if (!(dropout >= 0.0f && dropout < 1.0f)) {
    return InvalidArgument("dropout: must be in [0, 1), got " + std::to_string(dropout));
  }
  if (static_cast<int>(fanouts.size()) != layers) {
    return InvalidArgument("fanouts: one per layer (" + std::to_string(layers) + " layers), got " +
                           std::to_string(fanouts.size()));
  }
  for (int64_t f : fanouts) {
    if (f < 1 && f != -1) return InvalidArgument("fanouts: each must be >= 1 or -1 (all), got " + std::to_string(f));
  }
  if (eval_batch_size < 1) {
    return InvalidArgument("eval_batch_size: must be >= 1, got " + std::to_string(eval_batch_size));
  }
  if (reciprocal && link_decoder != "distmult") {
    return InvalidArgument("reciprocal: the dot decoder has no relation rows to reverse (use --decoder distmult)");
  }
  // The encoder's output rows are computed, not stored: the entity-table
  // options of the shallow models do not apply.
  if (table_store != "memory") {
    return InvalidArgument("table_store: a " + model + " encoder has no entity table (its input rows are "
                           "--node-features; learned:DIM keeps them on --feature-store)");
  }
  if (!checkpoint_dir.empty() || resume) {
    return Unimplemented("checkpoint: a " + model + " encoder does not write link checkpoints yet (the shallow "
                         "models do); use export_dir for the embeddings");
  }
  if (eval_negatives > 0) {
    return Unimplemented("eval_negatives: a " + model + " encoder ranks against every entity (leave it 0)");
  }
  return Status::OK();
}

}  // namespace foresight::trainer
