// `preprocess --task link` for the graph formats (private to
// foresight_datasets): splits the edges of a built CSR into link-prediction
// triples and keeps only the training edges in the graph.
#pragma once

#include <cstdint>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/storage/dataset.h"
#include "foresight/storage/link_triples.h"

namespace foresight::datasets::internal {

// Checks --edge-split: three fractions >= 0 summing to 1.
Status CheckEdgeSplit(const std::vector<double>& fractions);

// Reads the staging indptr/indices of `writer`, assigns each edge (each
// unordered pair when `undirected`) to train / val / test by a
// counter-based draw keyed by (seed, pair), writes link_train/val/test.npy
// and relation_names.npy ("edge"), and rewrites indptr/indices with the
// training edges only. Fills `layout` and `*train_graph_edges`. An empty
// split is InvalidArgument naming the fractions.
Status SplitEdgesForLink(storage::DatasetWriter* writer, int64_t num_nodes, bool undirected,
                         const std::vector<double>& fractions, uint64_t seed, storage::LinkLayout* layout,
                         int64_t* train_graph_edges);

}  // namespace foresight::datasets::internal
