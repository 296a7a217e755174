// The memory plan of shallow link-prediction training under
// --memory-budget: an itemised estimate of the process's peak RSS apart
// from the entity table's cache, and the cache the budget leaves (the
// table part is table_memory_plan's, shared with DLRM). Nothing in it
// grows with the entity count except the table itself on a memory store
// and the lru policy's per-key arrays. Private to the trainer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/storage/link_triples.h"
#include "foresight/trainer/train_options.h"
#include "foresight/trainer/trainer.h"
#include "pipeline/memory_plan.h"

namespace foresight::trainer::internal {

struct LinkMemoryInputs {
  const storage::LinkTriples* triples = nullptr;
  const TrainOptions* options = nullptr;
  int64_t baseline_bytes = 0;    // RSS before the triples were opened
  int64_t row_bytes = 0;         // an entity (and relation) row with its optimizer state
  int64_t entity_rows = 0;       // this rank's entity rows (every entity on one rank)
  int64_t relation_rows = 0;     // this rank's relation rows
  int ranks = 1;                 // the ranks the rows are sharded over (row-wise)
  int64_t evaluation_bytes = 0;  // the splits' candidates and filters (SplitEvaluation::bytes), measured
};

// Entity ids one training batch reads: its heads and tails, and each
// chunk's tail and head negatives.
int64_t LinkBatchIds(const TrainOptions& options, int64_t num_train);
// The ids the planner may hold at once beside its resident rows: W + 3 batches.
int64_t LinkWindowKeys(const TrainOptions& options, int64_t num_train);

// The largest part of a batch a rank takes on `ranks` ranks (the chunks
// RankPartOfLinkBatch gives it): its positives and its entity ids.
struct LinkPart {
  int64_t positives = 0;
  int64_t entity_ids = 0;
};
LinkPart LargestLinkPart(const TrainOptions& options, int64_t num_train, int ranks);

MemoryEstimate EstimateLinkMemory(const LinkMemoryInputs& in);

// The entity cache's bytes (PlanTableCacheBytes with link's advice), at
// most the whole table; 0 for the memory store, whose rows are an item of
// the estimate (a budget below it is refused the same way).
StatusOr<int64_t> PlanLinkCacheBytes(const TrainOptions& options, const MemoryEstimate& estimate, int64_t row_bytes,
                                     int64_t num_entities);

// The smallest --memory-budget `estimate` accepts (the memory store's has
// no cache slot to pay).
int64_t LinkMinimumBudget(const TrainOptions& options, const MemoryEstimate& estimate, int64_t row_bytes);

// One rank's outcome of the plan, as --plan-only reports it: its entity
// rows, its smallest budget, and the entity cache --memory-budget leaves it
// (-1: the budget is below its minimum).
struct LinkRankPlan {
  int64_t entity_rows = 0;
  int64_t minimum_budget = 0;
  int64_t cache_bytes = 0;
};
LinkRankPlan PlanOfThisRank(const TrainOptions& options, const MemoryEstimate& estimate, int64_t row_bytes,
                            int64_t entity_rows);

// The --plan-only text of `estimate`, rank `rank`'s items, with every
// rank's cache and smallest budget from `ranks` (one entry a rank); sets
// out->memory_plan and out->minimum_budget_bytes (the largest rank's: the
// budget is per rank).
void WriteLinkPlan(const TrainOptions& options, const storage::LinkTriples& triples, const MemoryEstimate& estimate,
                   int64_t row_bytes, int rank, const std::vector<LinkRankPlan>& ranks, TrainSummary* out);

}  // namespace foresight::trainer::internal
