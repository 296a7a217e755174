// The memory plan of shallow link-prediction training under
// --memory-budget: an itemised estimate of the process's peak RSS apart
// from the entity table's cache, and the cache the budget leaves (the
// table part is table_memory_plan's, shared with DLRM). Nothing in it
// grows with the entity count except the table itself on a memory store
// and the lru policy's per-key arrays. Private to the trainer.
#pragma once

#include <cstdint>

#include "foresight/core/status.h"
#include "foresight/storage/link_triples.h"
#include "foresight/trainer/train_options.h"
#include "pipeline/memory_plan.h"

namespace foresight::trainer::internal {

struct LinkMemoryInputs {
  const storage::LinkTriples* triples = nullptr;
  const TrainOptions* options = nullptr;
  int64_t baseline_bytes = 0;    // RSS before the triples were opened
  int64_t row_bytes = 0;         // an entity (and relation) row with its optimizer state
  int64_t relation_rows = 0;
  int64_t evaluation_bytes = 0;  // the splits' candidates and filters (SplitEvaluation::bytes), measured
};

// Entity ids one training batch reads: its heads and tails, and each
// chunk's tail and head negatives.
int64_t LinkBatchIds(const TrainOptions& options, int64_t num_train);
// The ids the planner may hold at once beside its resident rows: W + 3 batches.
int64_t LinkWindowKeys(const TrainOptions& options, int64_t num_train);

MemoryEstimate EstimateLinkMemory(const LinkMemoryInputs& in);

// The entity cache's bytes (PlanTableCacheBytes with link's advice), at
// most the whole table; 0 for the memory store, whose rows are an item of
// the estimate (a budget below it is refused the same way).
StatusOr<int64_t> PlanLinkCacheBytes(const TrainOptions& options, const MemoryEstimate& estimate, int64_t row_bytes,
                                     int64_t num_entities);

}  // namespace foresight::trainer::internal
