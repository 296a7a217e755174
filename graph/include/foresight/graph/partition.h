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
  int parts = 0;               // >= 1
  std::string method = "metis";  // "metis" or "stream"
  // Peak RSS the run may use; 0 = unlimited. metis refuses (with the
  // estimate and a hint to use stream) when its estimate exceeds it.
  int64_t memory_budget_bytes = 0;
  uint64_t seed = 0;
  // Fennel balance slack: no partition exceeds (1 + imbalance) * N / P.
  double imbalance = 0.05;
  // Where to write; "" = replace the input dataset.
  std::string output;
  bool overwrite = false;  // needed when output exists (and is a dataset)
  std::string temp_dir;    // spill files; "" = beside the output
};

struct PartitionReport {
  std::string method;
  int parts = 0;
  std::vector<int64_t> offsets;  // P+1
  int64_t num_edges = 0;
  int64_t edge_cut = 0;          // CSR edges whose ends lie in different parts
  double cut_fraction = 0;       // edge_cut / num_edges
  double balance = 0;            // largest part / (N / P)
  double seconds = 0;
  int64_t peak_rss_bytes = 0;
};

// The manifest "partitions" object written by PartitionDataset:
// {"method": ..., "parts": P, "offsets": [...], "edge_cut": ..., "balance": ...}.
// storage::Dataset exposes offsets through partition_offsets().
StatusOr<PartitionReport> PartitionDataset(const ExecContext& ctx, const std::string& dataset_dir,
                                           const PartitionOptions& options);

}  // namespace foresight::graph
