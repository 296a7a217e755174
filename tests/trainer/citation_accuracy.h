// Citation-graph accuracy checks shared by the integration and slow suites:
// a bundled citation graph (datasets/cora, citeseer, pubmed) preprocessed as
// the GCN/GAT papers do (undirected, row-normalised features, Planetoid
// split; the README's preprocess command) and the mean test accuracy over
// seeds 1..5.
#pragma once

#include <string>

#include "foresight/core/status.h"
#include "foresight/trainer/train_options.h"

namespace foresight::testing {

// Preprocesses datasets/<name> (with <name>.planetoid_split.tsv) into `dir`.
Status PrepareCitation(const std::string& name, const std::string& dir);

// Trains `options` with seeds 1..5 and returns the mean of the reported test
// accuracies (each at its best validation epoch); logs each run.
StatusOr<double> MeanTestAccuracy(trainer::TrainOptions options);

}  // namespace foresight::testing
