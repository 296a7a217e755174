// Graph partitioning of a stored dataset, and the renumbering that makes
// each partition a contiguous row range of every node array.
//
//   metis   libmetis k-way on the symmetrised graph (self loops and
//           duplicate edges removed) when it fits the memory budget
//   stream  a one-pass streaming partitioner (Fennel) over the CSR read in
//           chunks, for graphs METIS cannot hold: memory O(N) ints plus a
//           bounded read buffer
//
// The result is written as a new dataset version: indptr / indices
// renumbered (rows in new id order, neighbours mapped), features and labels
// permuted, split ids mapped, original_ids composed (new id -> original id;
// created as the identity map when the dataset had none, so exports still
// name the input's ids), and manifest "partitions" set. It is staged beside
// the dataset and renamed into place, so an interrupted or failed run (a
// full disk) leaves the dataset exactly as it was.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/status.h"

namespace foresight::graph {

struct PartitionOptions {
  // Default: 0 (must be set: 1 <= parts <= num_nodes).
  int parts = 0;
  // "metis" or "stream". Default: "metis".
  std::string method = "metis";
  // Peak RSS the run may use; 0 = unlimited. metis refuses (with the
  // estimate and a hint to use stream) when its estimate exceeds it; both
  // methods size their read and write buffers from it and refuse a budget
  // below their O(N) floor. Default: 0.
  int64_t memory_budget_bytes = 0;
  // Seeds METIS (METIS_OPTION_SEED). The stream method visits nodes in id
  // order and does not draw random numbers. Default: 0.
  uint64_t seed = 0;
  // Balance slack: no partition exceeds (1 + imbalance) * N / P (stream: a
  // hard cap; metis: its ufactor, which METIS meets up to rounding).
  // Default: 0.05.
  double imbalance = 0.05;
  // The order of the nodes inside each partition (the relabelling puts
  // rows read together side by side on disk): "none" (input id order),
  // "degree" (in-degree descending) or "bfs" (breadth-first over in-edges
  // inside the partition, roots by in-degree). bfs holds the neighbour
  // lists in memory. Default: "none".
  std::string node_order = "none";
  // Where to write; "" = replace the input dataset. Default: "".
  std::string output;
  // Needed when output exists (and is a dataset). Default: false.
  bool overwrite = false;
};

struct PartitionReport {
  std::string method;
  int parts = 0;
  std::vector<int64_t> offsets;  // P+1
  int64_t num_edges = 0;
  int64_t edge_cut = 0;          // CSR edges whose ends lie in different parts
  double cut_fraction = 0;       // edge_cut / num_edges (0 without edges)
  double balance = 0;            // largest part / (N / P)
  double seconds = 0;            // the whole call, commit included
  int64_t peak_rss_bytes = 0;    // getrusage ru_maxrss of the process at the end
  std::string output;            // the dataset dir written
};

// The manifest "partitions" object written by PartitionDataset:
// {"method": ..., "parts": P, "offsets": [...], "num_edges": ..., "edge_cut": ...,
//  "cut_fraction": ..., "balance": ..., "imbalance": ..., "seed": ..., "node_order": ...,
//  "seconds": ..., "peak_rss_bytes": ...} (seconds and peak RSS as of writing
// the manifest, before the commit's fsync and validation).
// storage::Dataset exposes offsets through partition_offsets().
// Errors: NotFound (no dataset), InvalidArgument (parts < 1 or > N, unknown
// method), ResourceExhausted (budget too small, disk full), DataLoss (a
// corrupt input array, named). On any error the input is unchanged and no
// staging directory is left.
StatusOr<PartitionReport> PartitionDataset(const ExecContext& ctx, const std::string& dataset_dir,
                                           const PartitionOptions& options);

}  // namespace foresight::graph
