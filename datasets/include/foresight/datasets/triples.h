// `foresight preprocess --format triples`: knowledge-graph triples
// ("head relation tail" lines, whitespace- or tab-separated string tokens;
// plain, .gz or .xz) to a graph dataset with link-prediction triples
// (storage/link_triples.h). Entities are relabelled 0..N-1 in order of
// first appearance (training file first) with their names kept in
// original_ids.npy; relations get ids 0..R-1 in order of first appearance
// in the training file, their names in relation_names.npy. The graph's
// edges are the training triples' head -> tail pairs (one edge per pair).
// Blank lines and '#' / '%' comment lines are skipped.
//
// Refused with "<file>:<line>: <what was expected>": a line without
// exactly three fields, a relation in the validation or test file that no
// training triple has (no embedding could be learned for it). An empty
// split is refused naming its file. Entities that only validation or test
// triples name are kept (ranked like any other) and counted in the report
// and manifest "link.unseen_entities".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "foresight/core/context.h"
#include "foresight/core/status.h"

namespace foresight::datasets {

struct TriplesPreprocessOptions {
  // --train, --val, --test: one file each. Required.
  std::string train, val, test;
  // --output OUT. Required.
  std::string output;
  // --overwrite: replace an existing dataset at OUT. Default: false.
  bool overwrite = false;
  // --name: manifest "name". Default: "" = the training file's folder name.
  std::string name;
  // --memory-budget for the graph build's external sort. Default: 1 GiB.
  size_t memory_budget_bytes = size_t{1} << 30;
  // --temp-dir for spilled sort runs. Default: "" = $TMPDIR or /tmp.
  std::string temp_dir;
};

struct TriplesPreprocessReport {
  int64_t num_entities = 0;
  int64_t num_relations = 0;
  int64_t num_train = 0, num_val = 0, num_test = 0;
  int64_t num_edges = 0;        // distinct head -> tail pairs of training
  int64_t unseen_entities = 0;  // named only by validation / test triples
};

Status PreprocessTriples(const TriplesPreprocessOptions& options, const ExecContext& ctx,
                         TriplesPreprocessReport* report = nullptr);

}  // namespace foresight::datasets
