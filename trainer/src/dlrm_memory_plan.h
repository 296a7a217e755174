// The memory plan of DLRM training under --memory-budget: an itemised
// estimate of the process's peak RSS apart from the tables' cache, and the
// cache size the budget leaves (as pipeline/memory_plan.h does for GNN
// features). Private to the trainer.
#pragma once

#include <cstdint>

#include "foresight/core/status.h"
#include "foresight/storage/clicks_dataset.h"
#include "foresight/trainer/train_options.h"
#include "pipeline/memory_plan.h"

namespace foresight::trainer::internal {

struct DlrmMemoryInputs {
  const storage::ClicksDataset* data = nullptr;
  const TrainOptions* options = nullptr;
  int64_t baseline_bytes = 0;     // RSS before the dataset was opened
  int64_t parameters = 0;         // dense parameter elements
  int64_t activation_width = 0;   // f32 values a sample's forward keeps (all layers)
  int64_t table_rows = 0;         // rows of all tables
  int64_t row_bytes = 0;          // a table row with its optimizer state
};

// The lookahead planner's index when the tables sit behind a lookahead
// cache: a map of the keys it holds (the resident rows and the keys of the
// batches in and around the window, DlrmWindowKeys), not an array over
// every row (cache::CacheConfig::window_index_keys).
bool DlrmUsesWindowIndex(const TrainOptions& options);
// The ids of the batches the planner may hold at once beside its resident
// rows: W + 3 batches of the larger batch size.
int64_t DlrmWindowKeys(const TrainOptions& options, const storage::ClicksDataset& data);
// Index bytes a cache slot adds under the window index (its map entries).
inline constexpr int64_t kWindowIndexBytesPerSlot = 64;

// Itemised peak RSS apart from the cache's slots (with the window index,
// its per-slot part is charged by PlanDlrmCacheBytes).
MemoryEstimate EstimateDlrmMemory(const DlrmMemoryInputs& in);

// The cache capacity: cache_size when given (checked against the budget
// when there is one), else what memory_budget leaves after `estimate`
// (ResourceExhausted listing the items when it leaves nothing), else 0.
// With the window index each slot also costs kWindowIndexBytesPerSlot.
StatusOr<int64_t> PlanDlrmCacheBytes(const TrainOptions& options, const MemoryEstimate& estimate, int64_t row_bytes);

}  // namespace foresight::trainer::internal
