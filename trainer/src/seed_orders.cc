#include "seed_orders.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "pipeline/pipeline_setup.h"

namespace foresight::trainer::internal {

StatusOr<SeedOrders> MakeSeedOrders(const storage::Dataset& d, const TrainOptions& o, int group_size, int owners) {
  SeedOrders out;
  if (o.order != "partition") {
    auto order = std::make_unique<sampler::SeedOrder>(d.train_ids(), o.batch_size, o.seed);
    FS_RETURN_IF_ERROR(order->status());
    out.order = std::move(order);
    return out;
  }
  FS_ASSIGN_OR_RETURN(std::vector<int64_t> offsets, PartitionOffsets(d));
  const int group = std::min(group_size, static_cast<int>(offsets.size()) - 1);
  if (owners > 1) {
    auto order = std::make_unique<sampler::OwnedPartitionOrder>(d.train_ids(), std::move(offsets), o.batch_size,
                                                                o.seed, group, owners);
    FS_RETURN_IF_ERROR(order->status().WithContext(o.dataset));
    out.owned = order.get();
    out.order = std::move(order);
    return out;
  }
  auto order = std::make_unique<sampler::PartitionOrder>(d.train_ids(), std::move(offsets), o.batch_size, o.seed,
                                                         group);
  FS_RETURN_IF_ERROR(order->status());
  out.partition = order.get();
  out.order = std::move(order);
  return out;
}

}  // namespace foresight::trainer::internal
