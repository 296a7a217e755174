#include "foresight/sampler/partition_order.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "order_util.h"

namespace foresight::sampler {

namespace {

// Its own RNG purpose, so its streams never collide with SeedOrder's.
constexpr uint64_t kPartitionOrderPurpose = static_cast<uint64_t>(RngPurpose::kPartitionOrder);

Status CheckOffsets(const std::vector<int64_t>& offsets) {
  if (offsets.size() < 2) {
    return InvalidArgument("PartitionOrder: offsets: expected P+1 >= 2 row offsets (at least one partition), got " +
                           std::to_string(offsets.size()));
  }
  if (offsets.size() - 1 > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return InvalidArgument("PartitionOrder: offsets: too many partitions (" + std::to_string(offsets.size() - 1) +
                           ")");
  }
  if (offsets[0] != 0) {
    return InvalidArgument("PartitionOrder: offsets[0] = " + std::to_string(offsets[0]) + " (expected 0)");
  }
  for (size_t p = 1; p < offsets.size(); ++p) {
    if (offsets[p] < offsets[p - 1]) {
      return InvalidArgument("PartitionOrder: offsets decrease at partition " + std::to_string(p - 1) +
                             " (offsets[" + std::to_string(p - 1) + "] = " + std::to_string(offsets[p - 1]) +
                             " > offsets[" + std::to_string(p) + "] = " + std::to_string(offsets[p]) + ")");
    }
  }
  return Status::OK();
}

}  // namespace

PartitionOrder::PartitionOrder(Tensor train_ids, std::vector<int64_t> offsets, int64_t batch_size, uint64_t seed,
                               int group_size, std::vector<int> partitions)
    : offsets_(std::move(offsets)), batch_size_(batch_size), seed_(seed), group_size_(group_size),
      visit_(std::move(partitions)) {
  status_ = Init(train_ids);
  if (!status_.ok()) {
    ids_ = Tensor();
    part_begin_.clear();
    visit_.clear();
    num_ids_ = 0;
    num_batches_ = 0;
  }
}

Status PartitionOrder::Init(const Tensor& train_ids) {
  FS_ASSIGN_OR_RETURN(Tensor ids, internal::CopyIdsToI64(train_ids, "PartitionOrder"));
  if (batch_size_ < 1) {
    return InvalidArgument("PartitionOrder: batch_size must be >= 1, got " + std::to_string(batch_size_));
  }
  if (group_size_ < 1) {
    return InvalidArgument("PartitionOrder: group_size must be >= 1, got " + std::to_string(group_size_));
  }
  FS_RETURN_IF_ERROR(CheckOffsets(offsets_));
  const int64_t num_rows = offsets_.back();
  const int64_t n = ids.numel();
  const int64_t* id = ids.data<int64_t>();
  const int parts = num_partitions();

  // Partition of every id (binary search over the offsets; empty
  // partitions have equal offsets and are never found), counted for a
  // stable counting sort that keeps train_ids order within a partition.
  std::vector<int> part_of(static_cast<size_t>(n));
  std::vector<int64_t> count(static_cast<size_t>(parts) + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (id[i] < 0 || id[i] >= num_rows) {
      return OutOfRange("PartitionOrder: train_ids[" + std::to_string(i) + "] = " + std::to_string(id[i]) +
                        " is outside the partitioned rows [0, " + std::to_string(num_rows) + ")");
    }
    part_of[i] = static_cast<int>(std::upper_bound(offsets_.begin(), offsets_.end(), id[i]) - offsets_.begin()) - 1;
    ++count[part_of[i] + 1];
  }
  part_begin_.assign(static_cast<size_t>(parts) + 1, 0);
  std::partial_sum(count.begin(), count.end(), part_begin_.begin());
  ids_ = Tensor::Empty({n}, DType::kI64);
  int64_t* grouped = ids_.data<int64_t>();
  std::vector<int64_t> fill(part_begin_.begin(), part_begin_.end() - 1);
  for (int64_t i = 0; i < n; ++i) grouped[fill[part_of[i]]++] = id[i];
  FS_RETURN_IF_ERROR(SetVisited());
  num_batches_ = (num_ids_ + batch_size_ - 1) / batch_size_;
  return Status::OK();
}

Status PartitionOrder::SetVisited() {
  const int parts = num_partitions();
  if (visit_.empty()) {
    visit_.resize(static_cast<size_t>(parts));
    std::iota(visit_.begin(), visit_.end(), 0);
  }
  std::sort(visit_.begin(), visit_.end());
  for (size_t k = 0; k < visit_.size(); ++k) {
    if (visit_[k] < 0 || visit_[k] >= parts) {
      return OutOfRange("PartitionOrder: partition " + std::to_string(visit_[k]) + " to visit is outside [0, " +
                        std::to_string(parts) + ")");
    }
    if (k > 0 && visit_[k] == visit_[k - 1]) {
      return InvalidArgument("PartitionOrder: partition " + std::to_string(visit_[k]) + " named twice to visit");
    }
  }
  num_ids_ = 0;
  for (int p : visit_) num_ids_ += part_begin_[p + 1] - part_begin_[p];
  return Status::OK();
}

int PartitionOrder::num_partitions() const {
  return offsets_.size() < 2 ? 0 : static_cast<int>(offsets_.size() - 1);
}

int PartitionOrder::num_groups() const {
  if (group_size_ < 1) return 0;
  return (static_cast<int>(visit_.size()) + group_size_ - 1) / group_size_;
}

// A fresh plan per epoch, shared read-only by every batch handed out.
std::shared_ptr<const PartitionOrder::EpochPlan> PartitionOrder::MakePlan(int64_t epoch) const {
  const RngKey key = RngKey::FromSeed(seed_).Fold(kPartitionOrderPurpose).Fold(static_cast<uint64_t>(epoch));
  // All P partitions visited: the permutation of 0..P-1 (as before visits
  // could be chosen); a subset: the same draw over its positions.
  const int parts = static_cast<int>(visit_.size()), groups = num_groups();
  std::vector<int64_t> perm(visit_.begin(), visit_.end());
  internal::Shuffle(perm.data(), parts, key);

  auto plan = std::make_shared<EpochPlan>();
  plan->parts.assign(perm.begin(), perm.end());
  plan->order = Tensor::Empty({num_ids_}, DType::kI64);
  plan->group_begin.reserve(static_cast<size_t>(groups) + 1);
  int64_t* out = plan->order.data<int64_t>();
  const int64_t* by_part = ids_.data<int64_t>();
  int64_t pos = 0;
  for (int g = 0; g < groups; ++g) {
    plan->group_begin.push_back(pos);
    const int64_t group_start = pos;
    const int last = std::min(parts, (g + 1) * group_size_);
    for (int k = g * group_size_; k < last; ++k) {
      const int64_t p = perm[k];
      const int64_t begin = part_begin_[p], n_p = part_begin_[p + 1] - begin;
      std::copy(by_part + begin, by_part + begin + n_p, out + pos);
      pos += n_p;
    }
    internal::Shuffle(out + group_start, pos - group_start, key.Fold(static_cast<uint64_t>(g)));
  }
  plan->group_begin.push_back(pos);
  return plan;
}

std::shared_ptr<const PartitionOrder::EpochPlan> PartitionOrder::Plan(int64_t epoch) const {
  return cache_.Get(epoch, [this](int64_t e) { return MakePlan(e); });
}

Tensor PartitionOrder::Batch(int64_t epoch, int64_t b) const {
  if (b < 0 || b >= num_batches_) return Tensor();
  const std::shared_ptr<const EpochPlan> plan = Plan(epoch);
  const int64_t begin = b * batch_size_;
  return plan->order.Slice(0, begin, std::min(begin + batch_size_, num_ids_));
}

std::vector<int> PartitionOrder::GroupPartitions(int64_t epoch, int g) const {
  if (g < 0 || g >= num_groups()) return {};
  const std::shared_ptr<const EpochPlan> plan = Plan(epoch);
  const int first = g * group_size_;
  const int last = std::min(static_cast<int>(visit_.size()), first + group_size_);
  std::vector<int> parts(plan->parts.begin() + first, plan->parts.begin() + last);
  std::sort(parts.begin(), parts.end());
  return parts;
}

std::pair<int, int> PartitionOrder::BatchGroups(int64_t epoch, int64_t b) const {
  if (b < 0 || b >= num_batches_) return {-1, -1};
  const std::shared_ptr<const EpochPlan> plan = Plan(epoch);
  const std::vector<int64_t>& starts = plan->group_begin;
  // The group holding position i: the last whose start is <= i (empty
  // groups share their start with the next and are skipped this way).
  auto group_at = [&starts](int64_t i) {
    return static_cast<int>(std::upper_bound(starts.begin(), starts.end() - 1, i) - starts.begin()) - 1;
  };
  const int64_t begin = b * batch_size_;
  const int64_t end = std::min(begin + batch_size_, num_ids_);
  return {group_at(begin), group_at(end - 1)};
}

std::vector<int> PartitionOrder::ResidentPartitions(int64_t epoch, int64_t b) const {
  const auto [first, last] = BatchGroups(epoch, b);
  if (first < 0) return {};
  std::vector<int> parts;
  for (int g = first; g <= last; ++g) {
    const std::vector<int> group = GroupPartitions(epoch, g);
    parts.insert(parts.end(), group.begin(), group.end());
  }
  std::sort(parts.begin(), parts.end());
  return parts;
}

}  // namespace foresight::sampler
