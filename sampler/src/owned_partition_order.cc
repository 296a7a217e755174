#include "foresight/sampler/owned_partition_order.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include "order_util.h"

namespace foresight::sampler {

StatusOr<std::vector<std::vector<int>>> AssignPartitionOwners(const std::vector<int64_t>& seeds,
                                                              const std::vector<int64_t>& rows, int owners) {
  const int parts = static_cast<int>(seeds.size());
  if (rows.size() != seeds.size()) {
    return InvalidArgument("AssignPartitionOwners: " + std::to_string(seeds.size()) + " seed counts but " +
                           std::to_string(rows.size()) + " row counts");
  }
  if (owners < 1) return InvalidArgument("AssignPartitionOwners: owners must be >= 1, got " + std::to_string(owners));
  if (owners > parts) {
    return InvalidArgument(std::to_string(owners) + " ranks need at least as many partitions, but the dataset has " +
                           std::to_string(parts) + "; partition it into >= " + std::to_string(owners) +
                           " parts (foresight partition --parts) or run fewer ranks");
  }
  const int with_seeds = static_cast<int>(std::count_if(seeds.begin(), seeds.end(), [](int64_t s) { return s > 0; }));
  if (with_seeds < owners) {
    return InvalidArgument(std::to_string(owners) + " ranks each need a partition holding training ids, but only " +
                           std::to_string(with_seeds) + " of the " + std::to_string(parts) +
                           " partitions hold any; partition into more parts or run fewer ranks");
  }
  std::vector<int> by_size(static_cast<size_t>(parts));
  std::iota(by_size.begin(), by_size.end(), 0);
  std::sort(by_size.begin(), by_size.end(), [&](int a, int b) {
    return std::make_tuple(-seeds[a], -rows[a], a) < std::make_tuple(-seeds[b], -rows[b], b);
  });
  struct Load {
    int64_t seeds = 0, rows = 0, parts = 0;
  };
  std::vector<Load> load(static_cast<size_t>(owners));
  std::vector<std::vector<int>> out(static_cast<size_t>(owners));
  for (int p : by_size) {
    int best = 0;
    for (int r = 1; r < owners; ++r) {
      if (std::make_tuple(load[r].seeds, load[r].rows, load[r].parts) <
          std::make_tuple(load[best].seeds, load[best].rows, load[best].parts)) {
        best = r;
      }
    }
    load[best].seeds += seeds[p];
    load[best].rows += rows[p];
    ++load[best].parts;
    out[best].push_back(p);
  }
  for (std::vector<int>& o : out) std::sort(o.begin(), o.end());
  return out;
}

Tensor OwnedPartitionOrder::Share::Batch(int64_t epoch, int64_t b) const {
  if (b < 0 || b >= num_batches_) return Tensor();
  if (b >= order_->num_batches()) return Tensor::Empty({0}, DType::kI64);  // this owner ran out
  return order_->Batch(epoch, b);
}

OwnedPartitionOrder::OwnedPartitionOrder(Tensor train_ids, std::vector<int64_t> offsets, int64_t batch_size,
                                         uint64_t seed, int group_size, int owners)
    : offsets_(std::move(offsets)), batch_size_(batch_size), seed_(seed) {
  status_ = Init(train_ids, group_size, owners);
  if (!status_.ok()) {
    parts_.clear();
    num_batches_ = 0;
  }
}

Status OwnedPartitionOrder::Init(const Tensor& train_ids, int group_size, int owners) {
  // The whole order checks the arguments (ids, offsets, sizes) once.
  const PartitionOrder all(train_ids, offsets_, batch_size_, seed_, std::max(1, group_size));
  FS_RETURN_IF_ERROR(all.status());
  if (owners < 1) return InvalidArgument("OwnedPartitionOrder: owners must be >= 1, got " + std::to_string(owners));
  FS_ASSIGN_OR_RETURN(Tensor ids, internal::CopyIdsToI64(train_ids, "OwnedPartitionOrder"));
  const int parts = all.num_partitions();
  std::vector<int64_t> seeds(static_cast<size_t>(parts), 0), rows(static_cast<size_t>(parts));
  const int64_t* id = ids.data<int64_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) {
    ++seeds[std::upper_bound(offsets_.begin(), offsets_.end(), id[i]) - offsets_.begin() - 1];
  }
  for (int p = 0; p < parts; ++p) rows[p] = offsets_[p + 1] - offsets_[p];
  FS_ASSIGN_OR_RETURN(std::vector<std::vector<int>> owned, AssignPartitionOwners(seeds, rows, owners));
  num_batches_ = all.num_batches();
  for (std::vector<int>& mine : owned) {
    int64_t n = 0;
    for (int p : mine) n += seeds[p];
    const int64_t size = std::max<int64_t>(1, (n + num_batches_ - 1) / num_batches_);
    const int group = std::min(group_size, static_cast<int>(mine.size()));
    auto order = std::make_unique<PartitionOrder>(train_ids, offsets_, size, seed_, group, std::move(mine));
    FS_RETURN_IF_ERROR(order->status());
    parts_.push_back(std::make_unique<Share>(std::move(order), num_batches_));
  }
  return Status::OK();
}

Tensor OwnedPartitionOrder::Batch(int64_t epoch, int64_t b) const {
  if (b < 0 || b >= num_batches_) return Tensor();
  std::vector<Tensor> pieces;
  int64_t n = 0;
  for (const auto& part : parts_) {
    pieces.push_back(part->Batch(epoch, b));
    n += pieces.back().numel();
  }
  Tensor out = Tensor::Empty({n}, DType::kI64);
  int64_t at = 0;
  for (const Tensor& t : pieces) {
    if (t.numel() == 0) continue;
    std::memcpy(out.data<int64_t>() + at, t.data<int64_t>(), static_cast<size_t>(t.numel()) * sizeof(int64_t));
    at += t.numel();
  }
  return out;
}

int64_t OwnedPartitionOrder::OwnerRows(int owner) const {
  int64_t rows = 0;
  for (int p : OwnerPartitions(owner)) rows += offsets_[p + 1] - offsets_[p];
  return rows;
}

std::string OwnedPartitionOrder::Describe() const {
  std::string s;
  for (int r = 0; r < owners(); ++r) {
    const PartitionOrder& o = OwnerOrder(r);
    std::string list;
    for (int p : o.visited_partitions()) list += (list.empty() ? "" : ",") + std::to_string(p);
    s += (r == 0 ? "" : "; ") + std::string("rank ") + std::to_string(r) + ": partitions " + list + " (" +
         std::to_string(o.num_ids()) + " seeds, " + std::to_string(OwnerRows(r)) + " rows, " +
         std::to_string(o.batch_size()) + " a batch, groups of " + std::to_string(o.group_size()) + ")";
  }
  return s;
}

}  // namespace foresight::sampler
