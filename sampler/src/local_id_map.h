// LocalIdMap: the global -> local id relabelling of one sampled batch. Local
// ids are handed out in first-appearance order (the destinations first, in
// order), sequentially, so they never depend on the thread count.
//
// An open-addressing hash table sized to the batch, not to the graph: a
// batch touches tens of thousands of nodes, so a table of four times that many
// entries stays within a core's L2 cache where a dense slot per graph node (4
// bytes x N) would spread the same lookups over a table of megabytes, each
// first touch a miss, and would cost 4 GB per sampler on a billion-node
// graph.
//
// An entry is a node and a tag: the batch's base plus the node's local id.
// Each batch starts at a base past every tag written before, so an entry
// whose tag is below the base reads as empty and Reset is O(1). On graphs of
// fewer than 2^31 nodes the node is stored in 32 bits: 8-byte entries, half
// the cache lines of 16-byte ones, which made the relabelling 25-30% faster
// on a cold table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

namespace foresight::sampler::internal {

class LocalIdMap {
 public:
  // `max_base` bounds the batches' tag base: when the next batch's would
  // pass it the table is cleared instead (once in ~2^30 / batch nodes
  // batches by default). Tests lower it to exercise that path.
  explicit LocalIdMap(uint32_t max_base = uint32_t{1} << 30) : max_base_(max_base) {}
  LocalIdMap(const LocalIdMap&) = delete;
  LocalIdMap& operator=(const LocalIdMap&) = delete;

  // Starts a batch over a graph of `num_nodes` nodes with `ids` (i32/i64,
  // 1-D, contiguous, host) as local ids 0..n-1. Errors name `what`, the
  // position and the value of an id out of range or repeated. The map is
  // left empty on error.
  Status Begin(int64_t num_nodes, const Tensor& ids, const char* what);

  // Writes the local id of each global id in global[0..n) to local[0..n),
  // giving new nodes the next local ids. `local` may be `global` or lie
  // before it in the same buffer (each id is read before its slot or any
  // later one is written). A value out of range is reported as coming from
  // the graph's indices; the batch is then unusable (callers Reset).
  Status Relabel(const int64_t* global, int64_t* local, int64_t n);

  // The shape, dtype and device Begin takes `ids` in, errors naming
  // `what`.
  static Status CheckIds(const Tensor& ids, const char* what);

  // Empties the map in O(1); the table stays allocated for the next batch.
  void Reset();

  int64_t size() const { return size_; }
  // The global id of every local id, in order: a view of the map's own
  // buffer, no copy. Later Relabel calls only append (into a new buffer
  // when this one is full), so the view stays valid and unchanged.
  Tensor Nodes() const;
  // Nodes(), handed over: the map gives the buffer up and the next batch
  // writes a new one (of the same size, from the host allocator's cache).
  Tensor TakeNodes();

 private:
  template <typename Key>
  struct Entry {
    Key node;
    uint32_t tag;  // base_ + local id in the current batch; below base_: empty
  };
  template <typename Key>
  using Table = std::vector<Entry<Key>>;
  static_assert(sizeof(Entry<int32_t>) == 8 && sizeof(Entry<int64_t>) == 16,
                "IdTableEntryBytes (neighbor_sampler.h) states these sizes");

  // Makes the table hold at least `count` entries at most a quarter full:
  // at half full a third of the lookups met another node first, and the
  // probe loop's branch, mispredicted on each of them, cost 8% of sampling.
  template <typename Key>
  Status Fit(Table<Key>* table, int64_t count);
  template <typename Key>
  Status BeginWith(Table<Key>* table, const Tensor& ids, const char* what);
  template <typename Key>
  Status RelabelWith(Table<Key>* table, const int64_t* global, int64_t* local, int64_t n);
  // Makes the node buffer hold at least `count` ids, keeping the first
  // size_. Grows to twice its size, or at once to the last batch's size.
  void Reserve(int64_t count);

  // A node's home entry: the top bits of node times the golden ratio.
  static size_t HomeOf(int64_t node, int shift) {
    return static_cast<size_t>((static_cast<uint64_t>(node) * 0x9E3779B97F4A7C15ull) >> shift);
  }

  const uint32_t max_base_;
  // One of the two is in use: 32-bit nodes while num_nodes < 2^31.
  Table<int32_t> narrow_;
  Table<int64_t> wide_;
  bool wide_keys_ = false;
  size_t mask_ = 0;
  int shift_ = 64;
  uint32_t base_ = 1;  // tags of the current batch are base_ + local id
  int64_t num_nodes_ = 0;
  Tensor nodes_;       // i64 [capacity]: local id -> global id in [0, size_)
  int64_t size_ = 0;
  int64_t last_capacity_ = 0;  // of the buffer TakeNodes gave away
};

// Resets a map when the scope ends, whatever path returns.
class ScopedReset {
 public:
  explicit ScopedReset(LocalIdMap* map) : map_(map) {}
  ~ScopedReset() { map_->Reset(); }
  ScopedReset(const ScopedReset&) = delete;
  ScopedReset& operator=(const ScopedReset&) = delete;

 private:
  LocalIdMap* map_;
};

}  // namespace foresight::sampler::internal
