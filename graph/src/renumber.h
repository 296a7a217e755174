// The renumbering that makes partition p the rows [offsets[p], offsets[p+1])
// of every node array: a node's new id is its partition's offset plus its
// rank among that partition's nodes in old id order. The writer streams each
// source array once, in order, and appends every row to its partition's
// region of the output (so each region is written sequentially), holding
// O(N) ids and bounded buffers. Private to the graph module.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/thread_pool.h"
#include "source_dataset.h"

namespace foresight::graph::internal {

// offsets (P + 1) from part[] (values checked to lie in [0, parts)).
StatusOr<std::vector<int64_t>> PartitionOffsets(const std::vector<int32_t>& part, int parts);

// new_id[v] for old id v, given part[] and its offsets; parallel over
// `pool`, the same result for any thread count.
std::vector<int64_t> NewIds(const std::vector<int32_t>& part, const std::vector<int64_t>& offsets,
                            ThreadPool* pool);

// Largest partition over the even share N / P (1 for a perfect split).
double Balance(const std::vector<int64_t>& offsets);

struct RenumberOptions {
  size_t read_chunk_bytes = size_t{8} << 20;     // one source chunk
  size_t write_buffer_bytes = size_t{16} << 20;  // all P region buffers together
  ThreadPool* pool = nullptr;
};

struct RenumberResult {
  int64_t edge_cut = 0;  // CSR edges whose two ends lie in different partitions
};

// Writes indptr, indices, features, labels, train/val/test ids and
// original_ids (composed; the identity when the source has none) of the
// renumbered dataset into `out_dir` under the standard file names.
// Neighbour lists are mapped to new ids and sorted ascending (the order
// CsrBuilder writes). DataLoss names the source file on a bad id.
// `rank`: empty (a node's new id is its partition's offset plus its rank
// among the partition's nodes in old id order: every region is appended
// sequentially), or rank[v] inside v's partition from a node order
// (node_order.h: rows are placed by a ScatterWriter).
Status WriteRenumbered(const SourceDataset& src, const std::vector<int32_t>& part,
                       const std::vector<int64_t>& offsets, const std::vector<int64_t>& rank,
                       const RenumberOptions& options, const std::string& out_dir, RenumberResult* result);

}  // namespace foresight::graph::internal
