// `foresight train --model dlrm`: DLRM on a clicks dataset. The dense half
// (dlrm_model.h) trains on a dense optimizer; the tables (an
// embed::EmbeddingBagCollection on the chosen store, behind the lookahead
// cache) on the sparse optimizer fused into their backward. One stream of
// batches (dlrm_schedule.h) feeds the tables' lookahead window. Metrics
// lines at every evaluation, a final line at the best validation AUC.
// Private to the trainer; trainer::Train dispatches here.
#pragma once

#include "foresight/core/communicator.h"
#include "foresight/core/status.h"
#include "foresight/trainer/trainer.h"

namespace foresight::trainer::internal {

// `comm` of size > 1: this rank's part of a job whose ranks split every
// global batch and the tables (TrainOptions::sharding); rank 0 writes the
// metrics, the progress and the checkpoint pointer, every rank its shard.
Status TrainDlrm(const TrainOptions& options, const TrainCallbacks& callbacks, Communicator* comm,
                 TrainSummary* out);

}  // namespace foresight::trainer::internal
