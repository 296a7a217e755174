// Link-prediction training (TrainOptions::task = "link"), private to the
// trainer: trainer::Train hands a link task here.
#pragma once

#include "foresight/core/communicator.h"
#include "foresight/core/status.h"
#include "foresight/trainer/trainer.h"

namespace foresight::trainer::internal {

// Trains a shallow model (distmult, complex, transe, dot) on the triples of
// options.dataset (storage/link_triples.h): entity and relation rows in
// embed/ tables (the entity table on the memory or disk store, behind the
// lookahead cache), negatives shared by chunks of positives, scores by
// GEMM, the sparse optimizer fused into the row update. Evaluates filtered
// MRR and Hits@1/3/10 on the validation and test triples, writes the
// metrics file, and exports the embeddings when asked. Options must be
// valid (ValidateLink). callbacks.on_batch is called after every step.
Status TrainLink(const TrainOptions& options, const TrainCallbacks& callbacks, TrainSummary* out);

// The same models on comm->size() > 1 ranks, their entity and relation rows
// split row-wise across the ranks (link_sharded_trainer.cc): per-step losses
// and metrics those of one rank up to float rounding. Collective.
Status TrainLinkSharded(const TrainOptions& options, const TrainCallbacks& callbacks, Communicator* comm,
                        TrainSummary* out);

}  // namespace foresight::trainer::internal
