// The two ways of assigning every node a partition: METIS k-way over the
// whole symmetrised graph in memory, and a one-pass streaming Fennel over the
// CSR read in chunks. Both return part[v] in [0, parts) for v in [0, N).
// Private to the graph module.
#pragma once

#include <cstdint>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/thread_pool.h"
#include "source_dataset.h"

namespace foresight::graph::internal {

struct AssignOptions {
  int parts = 1;
  double imbalance = 0.05;
  uint64_t seed = 0;
  size_t read_chunk_bytes = size_t{8} << 20;  // CSR read buffer
  ThreadPool* pool = nullptr;
};

// Bytes the METIS path holds at its peak for a graph of n nodes and e CSR
// edges: the symmetrised adjacency (at most 2e entries), our arrays, and
// METIS's own coarsening copies (constants measured; see the .cc).
int64_t MetisMemoryEstimate(int64_t n, int64_t e);

// METIS_PartGraphKway on the symmetrised simple graph (self loops and
// duplicate edges removed), seeded with options.seed, load imbalance
// tolerance options.imbalance. ResourceExhausted when METIS runs out of
// memory; Unimplemented when the symmetrised graph exceeds METIS's idx_t.
StatusOr<std::vector<int32_t>> MetisAssign(const SourceDataset& src, const AssignOptions& options);

// Fennel (Tsourakakis et al., WSDM 2014) in one pass over the nodes in id
// order; see the .cc for the objective and its constants.
StatusOr<std::vector<int32_t>> FennelAssign(const SourceDataset& src, const AssignOptions& options);

}  // namespace foresight::graph::internal
