// Partition-aware seed order. Nodes are renumbered so that partition p is the
// contiguous id range [offsets[p], offsets[p+1]) (foresight partition), so
// seeds taken partition by partition make consecutive batches share
// neighbourhoods and their feature reads large and local.
//
// Partitions are grouped into fixed groups of `group_size` consecutive
// partitions (group g = partitions [g*K, min(P, (g+1)*K))). Each epoch visits
// the groups in a random permutation drawn from
// RngKey::FromSeed(seed).Fold(RngPurpose::kPartitionOrder).Fold(epoch)
// (Fisher-Yates as SeedOrder draws it); within a group the training ids are shuffled together (same
// key folded with the group), then cut into batches of batch_size. A batch never spans two groups, so the
// number of batches per epoch (the sum over groups of ceil(n_g / B)) is the
// same every epoch, and every seed of a batch lies in its group: the group
// is the set of partitions resident while the batch runs (--sampling
// resident restricts sampling to it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/sampler/epoch_cache.h"
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
  int group_size() const { return group_size_; }
  int64_t batch_size() const { return batch_size_; }
  // The group of batch b of epoch (its resident partitions are
  // [g*K, min(P, (g+1)*K))), or -1 when b is outside [0, num_batches()).
  // Consecutive batches with the same group share their resident set.
  int BatchGroup(int64_t epoch, int64_t b) const;
  // The partitions resident for batch b of epoch (its group), ascending;
  // empty when b is outside [0, num_batches()).
  std::vector<int> ResidentPartitions(int64_t epoch, int64_t b) const;
  const std::vector<int64_t>& offsets() const { return offsets_; }

 private:
  // One epoch's batches: the training ids in visiting order and where each
  // batch starts in it.
  struct EpochPlan {
    Tensor order;                      // i64 [num ids]
    std::vector<int64_t> batch_begin;  // [num_batches + 1]
    std::vector<int> batch_group;      // [num_batches]
  };
  Status Init(const Tensor& train_ids);
  std::shared_ptr<const EpochPlan> MakePlan(int64_t epoch) const;
  std::shared_ptr<const EpochPlan> Plan(int64_t epoch) const;

  std::vector<int64_t> offsets_;
  int64_t batch_size_ = 0;
  uint64_t seed_ = 0;
  int group_size_ = 1;
  // The training ids grouped: group g's are ids_[group_begin_[g],
  // group_begin_[g+1]), in train_ids order.
  Tensor ids_;
  std::vector<int64_t> group_begin_;
  int64_t num_batches_ = 0;
  Status status_;
  mutable internal::EpochCache<std::shared_ptr<const EpochPlan>> cache_;
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
