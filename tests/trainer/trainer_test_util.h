// Helpers shared by the trainer tests.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/trainer/train_options.h"
#include "testing/cli.h"

namespace foresight::testing {


// The metrics file's lines as JSON, with the timing keys removed (what must
// be identical between runs).
std::vector<nlohmann::json> ReadMetricsWithoutTimings(const std::string& path);

// Every file under `dir` (recursively), by path relative to `dir`, with its
// bytes: what must be identical between two checkpoints of equal runs.
std::map<std::string, std::string> TreeContents(const std::string& dir);

// Small, fast options on a synthetic dataset.
trainer::TrainOptions SmallOptions(const std::string& dataset, const std::string& model, bool full_graph);

}  // namespace foresight::testing
