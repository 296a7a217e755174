#include "local_id_map.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace foresight::sampler::internal {

namespace {

// How far ahead Relabel prefetches table entries.
constexpr int64_t kPrefetchDistance = 16;
constexpr int64_t kMaxLocalIds = std::numeric_limits<int32_t>::max();
constexpr int kMinLogCapacity = 12;

// Returns x, hiding from the optimiser how it was computed: a flag made
// from a comparison then stays a value (setcc) instead of being turned back
// into a branch on it.
inline int32_t Opaque(int32_t x) {
  asm("" : "+r"(x));
  return x;
}

// True when entry t belongs to the batch `stamp` and to another node than
// v: one branch, rarely taken, where && would branch on whether v is new.
inline bool OtherNodeAt(int64_t node, uint32_t entry_stamp, int64_t v, uint32_t stamp) {
  return (Opaque(entry_stamp == stamp) & Opaque(node != v)) != 0;
}

}  // namespace

Status LocalIdMap::Fit(int64_t count) {
  if (count > kMaxLocalIds) {
    return ResourceExhausted("NeighborSampler: a batch may reach " + std::to_string(count) +
                             " distinct nodes, beyond the 2^31-1 local ids of a block");
  }
  int log = kMinLogCapacity;
  while ((int64_t{1} << log) < 4 * count) ++log;
  if (!table_.empty() && table_.size() >= (size_t{1} << log)) return Status::OK();
  std::vector<Entry> bigger(size_t{1} << log, Entry{0, 0, 0});
  table_.swap(bigger);
  mask_ = table_.size() - 1;
  shift_ = 64 - log;
  stamp_ = 1;
  // Re-enter the batch's nodes under the new layout.
  for (size_t l = 0; l < nodes_.size(); ++l) {
    size_t h = Home(nodes_[l]);
    while (table_[h].stamp == stamp_) h = (h + 1) & mask_;
    table_[h] = Entry{nodes_[l], static_cast<int32_t>(l), stamp_};
  }
  return Status::OK();
}

void LocalIdMap::Reset() {
  nodes_.clear();
  if (++stamp_ == 0) {  // after 2^32 batches the stamps wrap: start clean
    for (Entry& e : table_) e.stamp = 0;
    stamp_ = 1;
  }
}

Status LocalIdMap::Begin(int64_t num_nodes, const Tensor& ids, const char* what) {
  Reset();
  if (!ids.defined() || ids.dim() != 1 || !ids.is_contiguous() || !ids.device().is_cpu() ||
      (ids.dtype() != DType::kI32 && ids.dtype() != DType::kI64)) {
    return InvalidArgument(std::string(what) + ": expected a contiguous 1-D i32 or i64 host tensor, got " +
                           (ids.defined() ? ids.ToString() : std::string("an undefined tensor")));
  }
  if (ids.size(0) > kMaxLocalIds) {
    return InvalidArgument(std::string(what) + ": " + std::to_string(ids.size(0)) +
                           " nodes exceed the 2^31-1 local ids of one batch");
  }
  num_nodes_ = num_nodes;
  FS_RETURN_IF_ERROR(Fit(ids.size(0)));
  const int64_t n = ids.size(0);
  nodes_.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = ids.dtype() == DType::kI32 ? ids.data<int32_t>()[i] : ids.data<int64_t>()[i];
    if (v < 0 || v >= num_nodes) {
      Reset();
      return OutOfRange(std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(v) +
                        " is out of range [0, " + std::to_string(num_nodes) + ")");
    }
    size_t h = Home(v);
    while (table_[h].stamp == stamp_ && table_[h].node != v) h = (h + 1) & mask_;
    if (table_[h].stamp == stamp_) {
      const int32_t first = table_[h].local;
      Reset();
      return InvalidArgument(std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(v) +
                             " repeats " + what + "[" + std::to_string(first) +
                             "] (destination nodes must be distinct)");
    }
    table_[h] = Entry{v, static_cast<int32_t>(i), stamp_};
    nodes_.push_back(v);
  }
  return Status::OK();
}

Status LocalIdMap::Relabel(int64_t* ids, int64_t n) {
  // At most min(size + n, num_nodes) nodes afterwards.
  FS_RETURN_IF_ERROR(Fit(std::min(size() + n, num_nodes_)));
  const uint64_t num_nodes = static_cast<uint64_t>(num_nodes_);
  Entry* table = table_.data();
  const size_t mask = mask_;
  const uint32_t stamp = stamp_;
  const int64_t first = size();
  // One spare slot: a node's global id is written at nodes[next] before it
  // is known whether the node is new.
  nodes_.resize(static_cast<size_t>(std::min(first + n, num_nodes_)) + 1);
  int64_t* nodes = nodes_.data();
  int32_t next = static_cast<int32_t>(first);
  // A local copy: the entry stores below could alias the member as far as
  // the compiler knows, and it would reload it twice per id.
  const int shift = shift_;
  for (int64_t e = 0; e < n; ++e) {
    if (e + kPrefetchDistance < n) {
      const uint64_t ahead = static_cast<uint64_t>(ids[e + kPrefetchDistance]);
      if (ahead < num_nodes) __builtin_prefetch(table + HomeOf(static_cast<int64_t>(ahead), shift), 1);
    }
    const int64_t v = ids[e];
    if (static_cast<uint64_t>(v) >= num_nodes) {
      nodes_.resize(static_cast<size_t>(next));
      return DataLoss("NeighborSampler: graph.indices holds node " + std::to_string(v) + ", outside [0, " +
                      std::to_string(num_nodes) + ") (run ValidateCsr on the graph)");
    }
    // Skip the entries of other nodes (rare: the table is at most a
    // quarter full). Whether v is new or seen is then a coin flip the branch
    // predictor would lose about half the time, so both cases run the same
    // straight-line code: rewrite the entry (unchanged when v was seen),
    // write v at nodes[next] and advance next only when v is new, with the
    // local id picked by a mask (the compiler turns && and ?: into exactly
    // the branches to avoid).
    size_t h = HomeOf(v, shift);
    while (OtherNodeAt(table[h].node, table[h].stamp, v, stamp)) h = (h + 1) & mask;
    Entry& t = table[h];
    const int32_t is_new = Opaque(t.stamp != stamp);
    const int32_t pick_next = -is_new;  // all ones when new
    const int32_t local = (t.local & ~pick_next) | (next & pick_next);
    t = Entry{v, local, stamp};
    nodes[next] = v;
    next += is_new;
    ids[e] = local;
  }
  nodes_.resize(static_cast<size_t>(next));
  return Status::OK();
}

Tensor LocalIdMap::NodesTensor() const {
  Tensor t = Tensor::Empty({size()}, DType::kI64);
  if (!nodes_.empty()) std::memcpy(t.raw_data(), nodes_.data(), nodes_.size() * sizeof(int64_t));
  return t;
}

}  // namespace foresight::sampler::internal
