// Sequential recommendation with SASRec (TrainOptions::model = "sasrec"),
// private to the trainer: trainer::Train hands it here.
#pragma once

#include "foresight/core/status.h"
#include "foresight/trainer/trainer.h"

namespace foresight::trainer::internal {

// Trains SASRec on the sequences dataset options.dataset
// (storage/sequences_dataset.h): the item embeddings in an embed/ table on
// table_store (memory, mmap, disk, rocksdb; behind the lookahead cache of
// cache_size bytes), updated by its fused sparse optimizer; the positional
// embeddings and the blocks on the dense optimizer. Batches are packed
// (no padding). Evaluates HR@10 / NDCG@10 on validation and test every
// eval_epochs (sasrec_eval.h), writes the metrics file (a line per epoch and
// a final line at the best validation NDCG@10). Options must be valid.
Status TrainSasrec(const TrainOptions& options, const TrainCallbacks& callbacks, TrainSummary* out);

// Checks the options that apply to sasrec (sasrec_options.cc).
Status ValidateSasrecOptions(const TrainOptions& options);

}  // namespace foresight::trainer::internal
