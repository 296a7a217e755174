// What the mini-batch trainer derives from TrainOptions and the dataset to
// build its pipeline: the feature RowStore (and, for stores held in memory,
// the rows themselves), the static cache's key order, and the partition
// offsets of a partitioned dataset. Private to the trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/kernels/csr.h"
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

// The training features: the RowStore that training and evaluation read,
// and, when that store's rows are addressable in this process, a host view
// of the very bytes the store reads, so the pipeline can gather a batch's
// rows straight from them (feature_pipeline.h, RowPath::kDirect).
struct TrainingFeatures {
  std::unique_ptr<storage::RowStore> store;
  // [N, F] of the store's dtype, sharing the store's storage (no copy);
  // undefined for a disk store (its rows are only reachable by I/O).
  Tensor host_rows;
};

// OpenFeatureStore, with the store's own host view of its rows
// (RowStore::host_rows: memory and mmap) for the direct row path. Training
// and evaluation share the one store, so an mmap'd file is mapped once (a
// second mapping would count its pages twice in RSS).
StatusOr<TrainingFeatures> OpenTrainingFeatures(const TrainOptions& options, const storage::Dataset& dataset);

// The `count` nodes of highest in-degree (indptr of the CSR by
// destination), highest first, ties by smaller id.
std::vector<int64_t> KeysByInDegree(const Tensor& indptr, int64_t count);
// The same among the ids of `ranges` ([begin, end) row ranges, disjoint,
// ascending): a rank's own partitions.
std::vector<int64_t> KeysByInDegree(const Tensor& indptr, int64_t count,
                                    const std::vector<std::pair<int64_t, int64_t>>& ranges);

// The `count` nodes that most edges from other partitions point to (edges
// u -> v of `graph`, by destination, with u outside v's partition; offsets:
// the P + 1 partition row offsets), highest first, ties by smaller id. Under
// the partition order these are the halo rows batches of many groups read:
// the lookahead window sees a row's reuse inside a group, not the next
// group's, so they are the rows a static tier keeps for the epoch.
StatusOr<std::vector<int64_t>> KeysByHaloDegree(const kernels::Csr& graph, const std::vector<int64_t>& offsets,
                                                int64_t count);

// resident_partitions 0: as many partitions as `cache_bytes` holds, by the
// largest partition's rows of `row_bytes` each (offsets: P + 1 row
// offsets), at least 1 and at most P. The group only shapes the order and
// the resident set, never the pipeline's memory.
int AutoGroupSize(const std::vector<int64_t>& offsets, int64_t row_bytes, int64_t cache_bytes);

// The dataset's partition offsets (P + 1 row offsets from the manifest's
// "partitions"); FailedPrecondition pointing at `foresight partition` when
// the dataset is not partitioned, DataLoss when the offsets are malformed.
StatusOr<std::vector<int64_t>> PartitionOffsets(const storage::Dataset& dataset);

}  // namespace foresight::trainer::internal
