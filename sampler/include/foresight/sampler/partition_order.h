// Partition-aware seed order. Nodes are renumbered so that partition p is the
// contiguous id range [offsets[p], offsets[p+1]) (foresight partition), so
// seeds taken partition by partition make consecutive batches share
// neighbourhoods and their feature reads large and local.
//
// Partitions are grouped into fixed groups of `group_size` consecutive
// partitions (group g = partitions [g*K, min(P, (g+1)*K))). Each epoch visits
// the groups in a random permutation drawn from
// RngKey::FromSeed(seed).Fold(kPartitionOrder).Fold(epoch); within a group the
// training ids are shuffled together (same key folded with the group), then
// cut into batches of batch_size. A batch never spans two groups, so the
// number of batches per epoch (the sum over groups of ceil(n_g / B)) is the
// same every epoch, and every seed of a batch lies in its group: the group
// is the set of partitions resident while the batch runs (--sampling
// resident restricts sampling to it).
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/sampler/seed_order.h"

namespace foresight::sampler {

class PartitionOrder : public BatchOrder {
 public:
  // `train_ids`: 1-D i32/i64 host ids in [0, offsets.back()). `offsets`:
  // P+1 non-decreasing row offsets starting at 0. group_size >= 1. Invalid
  // arguments leave the order with no batches and status() saying why.
  PartitionOrder(Tensor train_ids, std::vector<int64_t> offsets, int64_t batch_size, uint64_t seed,
                 int group_size = 1);

  const Status& status() const { return status_; }
  int64_t num_batches() const override { return num_batches_; }
  Tensor Batch(int64_t epoch, int64_t b) const override;

  int num_partitions() const;
  int num_groups() const;
  // The partitions resident for batch b of epoch (its group), ascending.
  std::vector<int> ResidentPartitions(int64_t epoch, int64_t b) const;
  const std::vector<int64_t>& offsets() const { return offsets_; }

 private:
  // (implementation's choice)
  std::vector<int64_t> offsets_;
  int64_t num_batches_ = 0;
  Status status_;
};

// "random" or "partition"; InvalidArgument naming the choices otherwise.
enum class OrderKind { kRandom, kPartition };
StatusOr<OrderKind> ParseOrderKind(const std::string& name);

// "full" (every in-neighbour may be sampled; features of all of them come
// through the cache) or "resident" (only in-neighbours inside the batch's
// resident partitions).
enum class SamplingScope { kFull, kResident };
StatusOr<SamplingScope> ParseSamplingScope(const std::string& name);

}  // namespace foresight::sampler
