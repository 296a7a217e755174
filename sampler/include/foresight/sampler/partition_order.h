// Partition-aware seed order. Nodes are renumbered so that partition p is the
// contiguous id range [offsets[p], offsets[p+1]) (foresight partition), so
// seeds taken partition by partition make consecutive batches share
// neighbourhoods and their feature reads large and local.
//
// Each epoch draws a random permutation of the partitions from
// RngKey::FromSeed(seed).Fold(RngPurpose::kPartitionOrder).Fold(epoch)
// (Fisher-Yates as SeedOrder draws it) and cuts it into groups of
// `group_size` consecutive partitions (the last may be smaller), so the
// partitions that share a group change every epoch: with partitions that
// follow the labels (METIS on a homophilous graph), fixed groups would feed
// the same few classes together every epoch. Within a group the training
// ids are shuffled together (the same key folded with the group's place in
// the epoch). The groups' ids are concatenated and cut into batches of
// batch_size, as SeedOrder cuts its permutation, so the batch count
// (ceil(n / B)) is the same every epoch. A batch lies in one group, or in two
// at a group boundary: its resident partitions (the set --sampling resident
// restricts sampling to, and what the cache holds while it runs) are those
// of the groups its seeds come from.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/sampler/epoch_cache.h"
#include "foresight/sampler/seed_order.h"

namespace foresight::sampler {

class PartitionOrder : public BatchOrder {
 public:
  // `train_ids`: 1-D i32/i64 host ids in [0, offsets.back()). `offsets`:
  // P+1 non-decreasing row offsets starting at 0. group_size >= 1.
  // `partitions`: the distinct partitions this order visits (one owner's
  // share of them, owned_partition_order.h); the training ids of the
  // others are left out. Empty: all P. Invalid arguments leave the order
  // with no batches and status() saying why.
  PartitionOrder(Tensor train_ids, std::vector<int64_t> offsets, int64_t batch_size, uint64_t seed,
                 int group_size = 1, std::vector<int> partitions = {});

  const Status& status() const { return status_; }
  int64_t num_batches() const override { return num_batches_; }
  Tensor Batch(int64_t epoch, int64_t b) const override;

  // P, the partitions of the offsets (visited or not).
  int num_partitions() const;
  // The partitions visited, ascending (all P unless the constructor named some).
  const std::vector<int>& visited_partitions() const { return visit_; }
  // Training ids in the visited partitions: every epoch visits each once.
  int64_t num_ids() const { return num_ids_; }
  // Groups per epoch: ceil(visited partitions / group_size).
  int num_groups() const;
  int group_size() const { return group_size_; }
  int64_t batch_size() const { return batch_size_; }
  // The partitions of the group at place g (0-based) of epoch, ascending;
  // empty when g is outside [0, num_groups()).
  std::vector<int> GroupPartitions(int64_t epoch, int g) const;
  // The places of the first and the last group that batch b of epoch takes
  // seeds from (equal unless b crosses a group boundary), or {-1, -1} when
  // b is outside [0, num_batches()).
  std::pair<int, int> BatchGroups(int64_t epoch, int64_t b) const;
  // The partitions resident for batch b of epoch (those of its groups),
  // ascending; empty when b is outside [0, num_batches()).
  std::vector<int> ResidentPartitions(int64_t epoch, int64_t b) const;
  const std::vector<int64_t>& offsets() const { return offsets_; }

 private:
  // One epoch's batches: the training ids in visiting order and where each
  // batch starts in it.
  struct EpochPlan {
    Tensor order;                      // i64 [num ids]
    std::vector<int> parts;            // visited partitions in visiting order
    std::vector<int64_t> group_begin;  // where each group's ids start in order [groups + 1]
  };
  Status Init(const Tensor& train_ids);
  // Checks and sorts visit_ (all P when empty) and counts its training ids.
  Status SetVisited();
  std::shared_ptr<const EpochPlan> MakePlan(int64_t epoch) const;
  std::shared_ptr<const EpochPlan> Plan(int64_t epoch) const;

  std::vector<int64_t> offsets_;
  int64_t batch_size_ = 0;
  uint64_t seed_ = 0;
  int group_size_ = 1;
  // The training ids by partition: partition p's are ids_[part_begin_[p],
  // part_begin_[p+1]), in train_ids order.
  Tensor ids_;
  std::vector<int64_t> part_begin_;
  std::vector<int> visit_;  // the partitions visited, ascending
  int64_t num_ids_ = 0;     // training ids in them
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
