#include "local_id_map.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "foresight/sampler/neighbor_sampler.h"

namespace foresight::sampler {

int64_t IdTableEntries(int64_t batch_nodes) {
  int log = 12;
  while ((int64_t{1} << log) < 4 * batch_nodes) ++log;
  return int64_t{1} << log;
}

int64_t IdTableEntryBytes(int64_t num_nodes) {
  return num_nodes > std::numeric_limits<int32_t>::max() ? 16 : 8;
}

namespace internal {

namespace {

// How far ahead the loops prefetch table entries. At ~5 ns an id, 32 ids
// cover the latency of an entry that the step's other phases pushed out to
// the L3 cache; 16 left part of it exposed (0.05 ms a batch in the step).
constexpr int64_t kPrefetchDistance = 32;
constexpr int64_t kMaxLocalIds = std::numeric_limits<int32_t>::max();
// tag - base (mod 2^32) below this: the entry belongs to the current batch.
constexpr uint32_t kLive = uint32_t{1} << 31;

// Returns x, hiding from the optimiser how it was computed: a flag made
// from a comparison then stays a value (setcc) instead of being turned back
// into a branch on it.
inline int32_t Opaque(int32_t x) {
  asm("" : "+r"(x));
  return x;
}

// True when an entry of the current batch holds another node than v: one
// branch, rarely taken, where && would branch on whether v is new.
template <typename Key>
inline bool OtherNodeAt(Key node, uint32_t tag, int64_t v, uint32_t base) {
  return (Opaque(tag - base < kLive) & Opaque(node != static_cast<Key>(v))) != 0;
}

}  // namespace

template <typename Key>
Status LocalIdMap::Fit(Table<Key>* table, int64_t count) {
  if (count > kMaxLocalIds) {
    return ResourceExhausted("NeighborSampler: a batch may reach " + std::to_string(count) +
                             " distinct nodes, beyond the 2^31-1 local ids of a block");
  }
  const int64_t entries = IdTableEntries(count);
  const int log = __builtin_ctzll(static_cast<unsigned long long>(entries));
  if (table->size() >= static_cast<size_t>(entries)) return Status::OK();
  // Tag 0 reads as empty for every base in [1, 2^31].
  Table<Key> bigger(size_t{1} << log, Entry<Key>{0, 0});
  table->swap(bigger);
  mask_ = table->size() - 1;
  shift_ = 64 - log;
  // Re-enter the batch's nodes under the new layout.
  Entry<Key>* t = table->data();
  const int64_t* nodes = size_ > 0 ? nodes_.data<int64_t>() : nullptr;
  for (int64_t l = 0; l < size_; ++l) {
    size_t h = HomeOf(nodes[l], shift_);
    while (t[h].tag - base_ < kLive) h = (h + 1) & mask_;
    t[h] = Entry<Key>{static_cast<Key>(nodes[l]), base_ + static_cast<uint32_t>(l)};
  }
  return Status::OK();
}

void LocalIdMap::Reserve(int64_t count) {
  const int64_t capacity = nodes_.defined() ? nodes_.size(0) : 0;
  if (capacity >= count) return;
  const int64_t grown = std::max({count, 2 * capacity, last_capacity_});
  Tensor bigger = Tensor::Empty({grown}, DType::kI64);
  if (size_ > 0) std::memcpy(bigger.raw_data(), nodes_.raw_data(), static_cast<size_t>(size_) * sizeof(int64_t));
  nodes_ = std::move(bigger);
}

void LocalIdMap::Reset() {
  const uint64_t next = uint64_t{base_} + static_cast<uint64_t>(size_) + 1;
  size_ = 0;
  if (next <= max_base_) {
    base_ = static_cast<uint32_t>(next);
    return;
  }
  // The next batch's tags could reach the stale ones: start clean.
  for (Entry<int32_t>& e : narrow_) e.tag = 0;
  for (Entry<int64_t>& e : wide_) e.tag = 0;
  base_ = 1;
}

Status LocalIdMap::CheckIds(const Tensor& ids, const char* what) {
  if (!ids.defined() || ids.dim() != 1 || !ids.is_contiguous() || !ids.device().is_cpu() ||
      (ids.dtype() != DType::kI32 && ids.dtype() != DType::kI64)) {
    return InvalidArgument(std::string(what) + ": expected a contiguous 1-D i32 or i64 host tensor, got " +
                           (ids.defined() ? ids.ToString() : std::string("an undefined tensor")));
  }
  if (ids.size(0) > kMaxLocalIds) {
    return InvalidArgument(std::string(what) + ": " + std::to_string(ids.size(0)) +
                           " nodes exceed the 2^31-1 local ids of one batch");
  }
  return Status::OK();
}

Status LocalIdMap::Begin(int64_t num_nodes, const Tensor& ids, const char* what) {
  Reset();
  FS_RETURN_IF_ERROR(CheckIds(ids, what));
  const bool wide = IdTableEntryBytes(num_nodes) == sizeof(Entry<int64_t>);
  if (wide != wide_keys_) {
    // Another graph: the other key width, and the other table's geometry.
    narrow_.clear();
    wide_.clear();
    wide_keys_ = wide;
  }
  num_nodes_ = num_nodes;
  return wide ? BeginWith(&wide_, ids, what) : BeginWith(&narrow_, ids, what);
}

template <typename Key>
Status LocalIdMap::BeginWith(Table<Key>* table, const Tensor& ids, const char* what) {
  FS_RETURN_IF_ERROR(Fit(table, ids.size(0)));
  const int64_t n = ids.size(0);
  const int32_t* ids32 = ids.dtype() == DType::kI32 ? ids.data<int32_t>() : nullptr;
  const int64_t* ids64 = ids32 == nullptr ? ids.data<int64_t>() : nullptr;
  auto id = [&](int64_t i) { return ids32 != nullptr ? int64_t{ids32[i]} : ids64[i]; };
  Entry<Key>* t = table->data();
  const uint64_t num_nodes = static_cast<uint64_t>(num_nodes_);
  Reserve(n + 1);  // at least one entry, so that the buffer exists
  int64_t* nodes = nodes_.data<int64_t>();
  // Any value hashes to an entry of the table: the prefetches need no
  // range check.
  for (int64_t i = 0; i < n && i < kPrefetchDistance; ++i) __builtin_prefetch(t + HomeOf(id(i), shift_), 1);
  for (int64_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) __builtin_prefetch(t + HomeOf(id(i + kPrefetchDistance), shift_), 1);
    const int64_t v = id(i);
    if (static_cast<uint64_t>(v) >= num_nodes) {
      Reset();
      return OutOfRange(std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(v) +
                        " is out of range [0, " + std::to_string(num_nodes_) + ")");
    }
    size_t h = HomeOf(v, shift_);
    while (OtherNodeAt(t[h].node, t[h].tag, v, base_)) h = (h + 1) & mask_;
    if (t[h].tag - base_ < kLive) {
      const uint32_t first = t[h].tag - base_;
      Reset();
      return InvalidArgument(std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(v) +
                             " repeats " + what + "[" + std::to_string(first) +
                             "] (destination nodes must be distinct)");
    }
    t[h] = Entry<Key>{static_cast<Key>(v), base_ + static_cast<uint32_t>(i)};
    nodes[i] = v;
    size_ = i + 1;  // so that an error's Reset moves the base past this tag
  }
  return Status::OK();
}

Status LocalIdMap::Relabel(const int64_t* global, int64_t* local, int64_t n) {
  return wide_keys_ ? RelabelWith(&wide_, global, local, n) : RelabelWith(&narrow_, global, local, n);
}

template <typename Key>
Status LocalIdMap::RelabelWith(Table<Key>* table, const int64_t* global, int64_t* local, int64_t n) {
  // At most min(size + n, num_nodes) nodes afterwards.
  FS_RETURN_IF_ERROR(Fit(table, std::min(size() + n, num_nodes_)));
  const uint64_t num_nodes = static_cast<uint64_t>(num_nodes_);
  Entry<Key>* t = table->data();
  const int64_t first = size();
  // One spare slot: a node's global id is written at nodes[next] before it
  // is known whether the node is new.
  Reserve(std::min(first + n, num_nodes_) + 1);
  int64_t* nodes = nodes_.data<int64_t>();
  int32_t next = static_cast<int32_t>(first);
  // Locals: the entry stores below could alias the members as far as the
  // compiler knows, and it would reload them for every id.
  const size_t mask = mask_;
  const int shift = shift_;
  const uint32_t base = base_;
  // Relabels global[e]; false when it is out of range.
  auto relabel = [&](int64_t e) {
    const int64_t v = global[e];
    if (static_cast<uint64_t>(v) >= num_nodes) return false;
    // Skip the entries of other nodes (rare: the table is at most a
    // quarter full). Whether v is new or seen is then a coin flip the
    // branch predictor would lose about half the time, so both cases run
    // the same straight-line code: rewrite the entry (unchanged when v was
    // seen), write v at nodes[next] and advance next only when v is new,
    // with the local id picked by a mask (the compiler turns && and ?:
    // into exactly the branches to avoid).
    size_t h = HomeOf(v, shift);
    while (OtherNodeAt(t[h].node, t[h].tag, v, base)) h = (h + 1) & mask;
    Entry<Key>& x = t[h];
    const int32_t seen_local = static_cast<int32_t>(x.tag - base);
    const int32_t is_new = Opaque(x.tag - base >= kLive);
    const int32_t pick_next = -is_new;  // all ones when new
    const int32_t id = (seen_local & ~pick_next) | (next & pick_next);
    x = Entry<Key>{static_cast<Key>(v), base + static_cast<uint32_t>(id)};
    nodes[next] = v;
    next += is_new;
    local[e] = id;
    return true;
  };
  // The loop runs at a few instructions per id, so the prefetch has its own
  // loop rather than a bound check per id, and no range check: any value
  // hashes to an entry of the table. The first ids' entries are prefetched
  // together before it: a sink call relabels one chunk of a hop, and their
  // misses would otherwise start one by one at every call.
  for (int64_t e = 0; e < n && e < kPrefetchDistance; ++e) __builtin_prefetch(t + HomeOf(global[e], shift), 1);
  int64_t e = 0;
  for (; e + kPrefetchDistance < n; ++e) {
    __builtin_prefetch(t + HomeOf(global[e + kPrefetchDistance], shift), 1);
    if (!relabel(e)) break;
  }
  if (e + kPrefetchDistance >= n) {
    while (e < n && relabel(e)) ++e;
  }
  if (e < n) {
    size_ = next;
    return DataLoss("NeighborSampler: graph.indices holds node " + std::to_string(global[e]) + ", outside [0, " +
                    std::to_string(num_nodes) + ") (run ValidateCsr on the graph)");
  }
  size_ = next;
  return Status::OK();
}

Tensor LocalIdMap::Nodes() const {
  return nodes_.defined() ? nodes_.Slice(0, 0, size_) : Tensor::Empty({0}, DType::kI64);
}

Tensor LocalIdMap::TakeNodes() {
  Tensor out = Nodes();
  if (nodes_.defined()) last_capacity_ = nodes_.size(0);
  nodes_ = Tensor();
  return out;
}

}  // namespace internal
}  // namespace foresight::sampler
