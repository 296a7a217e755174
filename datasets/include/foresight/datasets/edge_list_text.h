// A dataset's edges as a text edge list ("src dst" per line, the format
// `foresight preprocess --format edgelist` reads), plain or gzip: the raw
// input of an end-to-end run from a synthetic graph (bench/billion_edges.sh),
// written in bounded memory whatever the graph's size.
#pragma once

#include <cstdint>
#include <string>

#include "foresight/core/status.h"

namespace foresight::datasets {

struct EdgeListTextReport {
  int64_t edges = 0;        // lines written
  int64_t bytes = 0;        // bytes of the file written (compressed when gzip)
};

// Writes every edge u -> v of the dataset at `dataset_dir` (u in CSR row v)
// as the line "u v", rows in order, to `path`; gzip (level 1) when the name
// ends in ".gz". The file appears whole or not at all (written to
// "<path>.part", renamed at the end; a failed run removes the part).
// Memory: a 1 MiB buffer; the CSR is read mapped and its pages given back
// as the scan passes them. `progress`: a progress line on stderr.
Status WriteEdgeListText(const std::string& dataset_dir, const std::string& path, bool progress,
                         EdgeListTextReport* report);

}  // namespace foresight::datasets
