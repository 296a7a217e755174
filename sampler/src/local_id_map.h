// LocalIdMap: the global -> local id relabelling of one sampled batch. Local
// ids are handed out in first-appearance order (the destinations first, in
// order), sequentially, so they never depend on the thread count. A dense
// int32 array of one slot per graph node (-1 = absent) is kept across
// batches; Reset clears only the slots the batch touched.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/core/thread_pool.h"

namespace foresight::sampler::internal {

class LocalIdMap {
 public:
  LocalIdMap() = default;
  ~LocalIdMap();
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

  // Makes room for `n` node-list entries, so that appending up to n keeps
  // nodes().data() where it is (Relabel needs one entry past the last id).
  void Reserve(int64_t n) { nodes_.reserve(static_cast<size_t>(n)); }

  // Clears the touched slots; the array stays allocated for the next batch.
  // With a pool the slots are cleared in parallel (they are as many random
  // writes as the batch has nodes).
  void Reset(ThreadPool* pool = nullptr);

  int64_t size() const { return static_cast<int64_t>(nodes_.size()); }
  // Global id of every local id, in order.
  const std::vector<int64_t>& nodes() const { return nodes_; }
  // A copy of nodes() as an i64 tensor.
  Tensor NodesTensor() const;

 private:
  // Sizes the slot array for `num_nodes` (all -1), reallocating only when
  // the node count changes.
  Status Allocate(int64_t num_nodes);

  // global id -> local id, -1 when absent. Lookups are random over the whole
  // array, so it is backed by transparent huge pages where the OS allows:
  // on large graphs the TLB misses otherwise cost more than the cache misses.
  int32_t* slot_ = nullptr;
  int64_t num_nodes_ = 0;
  size_t slot_bytes_ = 0;
  std::vector<int64_t> nodes_;   // local id -> global id
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
