// LocalIdMap: the global -> local id relabelling of one sampled batch. Local
// ids are handed out in first-appearance order (the destinations first, in
// order), sequentially, so they never depend on the thread count.
//
// An open-addressing hash table sized to the batch, not to the graph: a
// batch touches tens of thousands of nodes, so a table of four times that many
// entries stays in a core's L2 cache where a dense slot per graph node (4
// bytes x N) would spread the same lookups over a table of megabytes, each
// first touch a miss, and would cost 4 GB per sampler on a billion-node
// graph. Each entry carries the stamp of the batch that wrote it, so Reset
// is O(1): the next batch's stamp makes every old entry read as empty.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

namespace foresight::sampler::internal {

class LocalIdMap {
 public:
  LocalIdMap() = default;
  LocalIdMap(const LocalIdMap&) = delete;
  LocalIdMap& operator=(const LocalIdMap&) = delete;

  // Starts a batch over a graph of `num_nodes` nodes with `ids` (i32/i64,
  // 1-D, contiguous, host) as local ids 0..n-1. Errors name `what`, the
  // position and the value of an id out of range or repeated. The map is
  // left empty on error.
  Status Begin(int64_t num_nodes, const Tensor& ids, const char* what);

  // Replaces each global id in ids[0..n) by its local id, giving new ones
  // the next local ids. A value out of range is reported as coming from
  // the graph's indices; the batch is then unusable (callers Reset).
  Status Relabel(int64_t* ids, int64_t n);

  // Empties the map in O(1); the table stays allocated for the next batch.
  void Reset();

  int64_t size() const { return static_cast<int64_t>(nodes_.size()); }
  // Global id of every local id, in order.
  const std::vector<int64_t>& nodes() const { return nodes_; }
  // A copy of nodes() as an i64 tensor.
  Tensor NodesTensor() const;

 private:
  struct Entry {
    int64_t node;
    int32_t local;
    uint32_t stamp;  // the batch that wrote the entry; any other: empty
  };

  // Makes the table hold at least `count` entries at most a quarter full:
  // at half full a third of the lookups met another node first, and the
  // probe loop's branch, mispredicted on each of them, cost 8% of sampling.
  Status Fit(int64_t count);
  // A node's home entry: the top bits of node times the golden ratio.
  static size_t HomeOf(int64_t node, int shift) {
    return static_cast<size_t>((static_cast<uint64_t>(node) * 0x9E3779B97F4A7C15ull) >> shift);
  }
  size_t Home(int64_t node) const { return HomeOf(node, shift_); }

  std::vector<Entry> table_;
  size_t mask_ = 0;
  int shift_ = 64;
  uint32_t stamp_ = 1;
  int64_t num_nodes_ = 0;
  std::vector<int64_t> nodes_;  // local id -> global id
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
