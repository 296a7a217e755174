// One batch of a clicks dataset as DLRM reads it: the dense features, the
// labels as f32 targets, and every categorical field's ids in the
// embedding-bag layout (bags table-major). Private to the trainer.
#pragma once

#include <cstdint>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/core/thread_pool.h"
#include "foresight/storage/clicks_dataset.h"

namespace foresight::trainer::internal {

struct ClickBatch {
  Tensor rows;     // i64 [B]: the dataset rows of the batch, in batch order
  Tensor dense;    // f32 [B, D]
  Tensor targets;  // f32 [B]: the labels, 0 or 1
  Tensor ids;      // i64 [sum of bag sizes over fields and samples]
  Tensor offsets;  // i64 [T*B + 1]: bag t*B + b is field t of sample b
};

// Gathers the dataset rows `rows` (i64 [B], each in [0, num_samples)).
// Ids are the dataset's (checked in range when it was opened). With a pool,
// the fields are gathered over its threads (the same batch).
StatusOr<ClickBatch> MakeClickBatch(const storage::ClicksDataset& data, const Tensor& rows,
                                    ThreadPool* pool = nullptr);

// The rows [begin, end) as an i64 tensor (evaluation's in-order batches).
Tensor RowRangeIds(int64_t begin, int64_t end);

}  // namespace foresight::trainer::internal
