// The partition order split between owners (the ranks of data-parallel
// training): each owner holds a fixed set of partitions, visits only its
// own in a PartitionOrder of its own (groups of its own partitions, drawn
// every epoch), and takes its part of every global batch from there, so
// the rows an owner's batches need are its partitions' and their sampled
// halo, never the whole graph's.
//
// Global batch b of an epoch is the concatenation, owner by owner, of
// every owner's batch b. With B the batch size and n the training ids,
// there are ceil(n / B) global batches (as in the one-owner order), and
// owner r of n_r ids takes ceil(n_r / ceil(n / B)) seeds a batch: global
// batches hold about B seeds (at most B + owners - 1), each owner's share
// in proportion to its seeds, and an owner that runs out early gives
// empty parts. The order is a pure function of (train ids, offsets, B,
// seed, group size, owners) and (epoch, b), so one process built with N
// owners trains exactly the global batches N ranks do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/sampler/partition_order.h"

namespace foresight::sampler {

// Which owner holds which partitions: balanced by training seeds (the
// work of a step), then rows (the reads), then partitions. Partitions are
// taken by decreasing seed count (then rows, then id), each to the owner
// with the fewest seeds so far (then rows, partitions, then the smallest
// owner). Deterministic. `seeds` and `rows`: per partition, equal sizes.
// InvalidArgument when there are more owners than partitions, or fewer
// partitions holding training seeds than owners (an owner would have
// nothing to train).
StatusOr<std::vector<std::vector<int>>> AssignPartitionOwners(const std::vector<int64_t>& seeds,
                                                              const std::vector<int64_t>& rows, int owners);

class OwnedPartitionOrder : public BatchOrder {
 public:
  // As PartitionOrder's arguments, and owners >= 1. group_size is per
  // owner (clamped to its partition count). Invalid arguments leave the
  // order with no batches and status() saying why.
  OwnedPartitionOrder(Tensor train_ids, std::vector<int64_t> offsets, int64_t batch_size, uint64_t seed,
                      int group_size, int owners);

  const Status& status() const { return status_; }
  // ceil(n / batch_size).
  int64_t num_batches() const override { return num_batches_; }
  // The owners' batch b, owner 0 first (i64, a new tensor).
  Tensor Batch(int64_t epoch, int64_t b) const override;

  int owners() const { return static_cast<int>(parts_.size()); }
  // Owner r's part of every global batch (lives as long as this order):
  // its batch b, an empty i64 tensor once it has run out, undefined
  // outside [0, num_batches()).
  const BatchOrder& Part(int owner) const { return *parts_[owner]; }
  // Owner r's own partition order (its batches of its batch size).
  const PartitionOrder& OwnerOrder(int owner) const { return parts_[owner]->order(); }
  // Owner r's partitions, ascending.
  const std::vector<int>& OwnerPartitions(int owner) const { return OwnerOrder(owner).visited_partitions(); }
  // Owner r's rows (the sum of its partitions' sizes).
  int64_t OwnerRows(int owner) const;
  // One line: the owners' partitions, seeds, rows and batch sizes.
  std::string Describe() const;

 private:
  // One owner's part: its PartitionOrder, padded with empty batches up to
  // the global count.
  class Share : public BatchOrder {
   public:
    Share(std::unique_ptr<PartitionOrder> order, int64_t num_batches)
        : order_(std::move(order)), num_batches_(num_batches) {}
    int64_t num_batches() const override { return num_batches_; }
    Tensor Batch(int64_t epoch, int64_t b) const override;
    const PartitionOrder& order() const { return *order_; }

   private:
    std::unique_ptr<PartitionOrder> order_;
    int64_t num_batches_;
  };
  Status Init(const Tensor& train_ids, int group_size, int owners);

  std::vector<int64_t> offsets_;
  int64_t batch_size_ = 0;
  uint64_t seed_ = 0;
  int64_t num_batches_ = 0;
  std::vector<std::unique_ptr<Share>> parts_;
  Status status_;
};

}  // namespace foresight::sampler
