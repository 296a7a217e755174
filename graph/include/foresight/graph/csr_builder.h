// Builds a CSR-by-destination graph (row v lists v's in-neighbours: an edge
// u -> v puts u in row v) from an edge stream of any size, within a RAM
// budget. Edges are buffered; a full buffer is sorted by (dst, src) over the
// thread pool and spilled to an unlinked temporary run file; Finish k-way
// merges the runs and streams indptr / indices straight into .npy files, so
// memory stays at the budget whatever the number of edges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/thread_pool.h"

namespace foresight::graph {

struct CsrBuildOptions {
  // RAM for buffered edges, including the sort's scratch (each buffered edge
  // costs 32 bytes: 16 for the (dst, src) pair, 16 for the merge sort).
  // Default: 1 GiB.
  size_t memory_budget_bytes = size_t{1} << 30;
  // Directory for spilled runs (files are unlinked right after creation, so
  // nothing is left behind on a crash). Default: "" = $TMPDIR, else /tmp.
  std::string temp_dir;
  // Adds v -> u for every u -> v (before duplicate removal). Default: false.
  bool undirected = false;
  // Keeps u -> u edges. Default: false (dropped and counted).
  bool keep_self_loops = false;
  // Keeps repeated (u, v) edges. Default: false (dropped and counted).
  bool keep_duplicates = false;
  // Pool for sorting. Default: nullptr = DefaultThreadPool().
  ThreadPool* pool = nullptr;
};

struct CsrBuildStats {
  int64_t input_edges = 0;         // edges passed to Add / AddBatch
  int64_t self_loops_dropped = 0;  // input self loops dropped
  int64_t duplicates_dropped = 0;  // directed duplicates removed (after symmetrising)
  int64_t num_edges = 0;           // edges written to indices
  int64_t num_runs = 0;            // runs spilled to disk
};

// Not thread-safe: one producer adds edges, then calls Finish once.
class CsrBuilder {
 public:
  static StatusOr<std::unique_ptr<CsrBuilder>> Create(const CsrBuildOptions& options);
  ~CsrBuilder();
  CsrBuilder(const CsrBuilder&) = delete;
  CsrBuilder& operator=(const CsrBuilder&) = delete;

  // Adds the edge src -> dst. Ids must be >= 0 (callers check the range
  // against their input, with line numbers, before adding).
  Status Add(int64_t src, int64_t dst);
  // Adds n edges src[i] -> dst[i].
  Status AddBatch(const int64_t* src, const int64_t* dst, int64_t n);
  // Memory the caller holds for as long as edges are buffered (a label per
  // node read before the edges, say): the sort's buffer gives up as much, so
  // the process as a whole stays within memory_budget_bytes. Before the
  // first Add only (FailedPrecondition after). Charges add up.
  Status ChargeHeldBytes(size_t bytes);
  // Largest id seen so far, -1 before the first edge.
  int64_t max_id() const { return max_id_; }

  // Merges everything and writes indptr (i64 [num_nodes + 1]) to
  // `indptr_path` and indices (i32 when num_nodes <= INT32_MAX, else i64) to
  // `indices_path`, both via storage::NpyWriter. OutOfRange when an id is
  // >= num_nodes. The builder is spent afterwards.
  Status Finish(int64_t num_nodes, const std::string& indptr_path, const std::string& indices_path);

  const CsrBuildStats& stats() const { return stats_; }
  // Edges a run holds in memory under the budget.
  int64_t run_capacity() const { return capacity_; }

 private:
  struct Edge {
    int64_t dst;
    int64_t src;
  };
  class RunReader;
  explicit CsrBuilder(const CsrBuildOptions& options);
  Status Push(int64_t src, int64_t dst);
  // Sorts buf_[0, size_) and removes duplicates unless kept.
  void SortBuffer();
  Status SpillRun();

  // Buffered edges the budget allows after what the caller holds.
  int64_t CapacityFor(size_t held) const;

  CsrBuildOptions options_;
  ThreadPool* pool_;
  size_t held_ = 0;  // ChargeHeldBytes so far
  int64_t capacity_ = 0;
  std::vector<Edge> buf_;
  std::vector<Edge> scratch_;
  int64_t size_ = 0;
  int64_t max_id_ = -1;
  std::vector<int> run_fds_;
  std::vector<int64_t> run_sizes_;
  CsrBuildStats stats_;
  bool finished_ = false;
};

}  // namespace foresight::graph
