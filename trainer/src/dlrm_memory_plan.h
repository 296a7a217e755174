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
#include "table_memory_plan.h"

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

// The ids of the batches the planner may hold at once beside its resident
// rows: W + 3 batches of the larger batch size.
int64_t DlrmWindowKeys(const TrainOptions& options, const storage::ClicksDataset& data);

// Itemised peak RSS apart from the cache's slots (with the window index,
// its per-slot part is charged by PlanDlrmCacheBytes).
MemoryEstimate EstimateDlrmMemory(const DlrmMemoryInputs& in);

// The cache capacity (PlanTableCacheBytes with DLRM's advice).
StatusOr<int64_t> PlanDlrmCacheBytes(const TrainOptions& options, const MemoryEstimate& estimate, int64_t row_bytes);

}  // namespace foresight::trainer::internal
