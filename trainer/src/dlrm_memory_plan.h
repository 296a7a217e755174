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

MemoryEstimate EstimateDlrmMemory(const DlrmMemoryInputs& in);

// The cache capacity: cache_size when given (checked against the budget
// when there is one), else what memory_budget leaves after `estimate`
// (ResourceExhausted listing the items when it leaves nothing), else 0.
StatusOr<int64_t> PlanDlrmCacheBytes(const TrainOptions& options, const MemoryEstimate& estimate);

}  // namespace foresight::trainer::internal
