// Cora accuracy checks shared by the integration and slow suites: the
// bundled Cora preprocessed as the GCN/GAT papers do (undirected, row-
// normalised features, Planetoid split) and the mean test accuracy over
// seeds 1..5.
#pragma once

#include <string>

#include "foresight/core/status.h"
#include "foresight/trainer/train_options.h"

namespace foresight::testing {

// Preprocesses datasets/cora into `dir`.
Status PrepareCora(const std::string& dir);

// Trains `options` with seeds 1..5 and returns the mean of the reported test
// accuracies (each at its best validation epoch); logs each run.
StatusOr<double> MeanTestAccuracy(trainer::TrainOptions options);

}  // namespace foresight::testing
