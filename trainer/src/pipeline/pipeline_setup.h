// What the mini-batch trainer derives from TrainOptions and the dataset to
// build its pipeline: the feature RowStore, the static cache's key order,
// and the partition offsets of a partitioned dataset. Private to the
// trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/storage/dataset.h"
#include "foresight/storage/row_store.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer::internal {

// The dataset's features file as a read-only RowStore of the kind
// options.feature_store names (disk: options.io_depth requests in flight).
// `buffered` opens a disk store through the page cache instead of O_DIRECT
// (evaluation's store, below); other kinds ignore it.
StatusOr<std::unique_ptr<storage::RowStore>> OpenFeatureStore(const TrainOptions& options,
                                                              const storage::Dataset& dataset,
                                                              bool buffered = false);

// The `count` nodes of highest in-degree (indptr of the CSR by
// destination), highest first, ties by smaller id.
std::vector<int64_t> KeysByInDegree(const Tensor& indptr, int64_t count);

// The dataset's partition offsets (P + 1 row offsets from the manifest's
// "partitions"); FailedPrecondition pointing at `foresight partition` when
// the dataset is not partitioned, DataLoss when the offsets are malformed.
StatusOr<std::vector<int64_t>> PartitionOffsets(const storage::Dataset& dataset);

}  // namespace foresight::trainer::internal
