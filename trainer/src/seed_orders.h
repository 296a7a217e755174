// The seed order of mini-batch GNN training, built one way for the
// runner and the cache curve's trace: shuffled seeds, the partition order,
// or the partition order split between the ranks that own the partitions.
// Private to the trainer.
#pragma once

#include <memory>

#include "foresight/core/status.h"
#include "foresight/sampler/owned_partition_order.h"
#include "foresight/sampler/partition_order.h"
#include "foresight/sampler/seed_order.h"
#include "foresight/storage/dataset.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer::internal {

struct SeedOrders {
  std::unique_ptr<sampler::BatchOrder> order;             // the global order
  const sampler::PartitionOrder* partition = nullptr;      // order, when partition with one owner
  const sampler::OwnedPartitionOrder* owned = nullptr;     // order, when partition split between owners
};

// o.order's order of d's training ids. Partition: in groups of
// `group_size` (>= 1; clamped to the partitions), split between `owners`
// ranks when owners > 1 (each rank's groups of its own partitions).
StatusOr<SeedOrders> MakeSeedOrders(const storage::Dataset& d, const TrainOptions& o, int group_size, int owners);

}  // namespace foresight::trainer::internal
