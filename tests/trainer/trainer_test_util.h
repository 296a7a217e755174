// Helpers shared by the trainer tests.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "foresight/trainer/train_options.h"
#include "synthetic_dataset.h"
#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight::testing {


// The metrics file's lines as JSON, with the timing keys and the page-fault
// count removed (what must be identical between runs).
std::vector<nlohmann::json> ReadMetricsWithoutTimings(const std::string& path);

// Every file under `dir` (recursively), by path relative to `dir`, with its
// bytes: what must be identical between two checkpoints of equal runs.
std::map<std::string, std::string> TreeContents(const std::string& dir);

// A fixture (over ::testing::Test or a parameterised Base) whose SetUp
// writes a synthetic dataset of kNodes nodes to dir_.File("data").
template <int64_t kNodes = SyntheticSpec().num_nodes, typename Base = ::testing::Test>
class SyntheticDatasetTest : public Base {
 protected:
  void SetUp() override {
    SyntheticSpec spec;
    spec.num_nodes = kNodes;
    ASSERT_OK(WriteSyntheticDataset(dir_.File("data"), spec));
  }
  TempDir dir_;
};

// Trains; every step's loss, in order (a test failure, and the losses so
// far, when training fails).
std::vector<double> StepLosses(const trainer::TrainOptions& options);

// Expects got's first `steps` losses each within 1e-5 relative of want's
// (the bar for several ranks against one); returns the largest relative
// difference, for the test's log. `what` names the run in a failure.
double ExpectLossesNear(const std::vector<double>& got, const std::vector<double>& want, size_t steps,
                        const std::string& what);

// Writes NAME.train.txt / NAME.valid.txt / NAME.test.txt (one "head
// relation tail" triple a line) into `dir` and preprocesses them into
// dir/NAME: a link test's graph.
Status PreprocessTriplesInto(const TempDir& dir, const std::string& name, const std::string& train,
                             const std::string& val, const std::string& test);

// The link graph of the memory-budget tests, written to `path`:
// `entities` nodes and 30,000 edges of one relation, split 0.9 / 0.05 /
// 0.05, seed 4; no features (the rows are learned).
Status GenerateBudgetLinkGraph(const std::string& path, int64_t entities);
// The memory-budget tests' link run on that graph: distmult, dim 16, sgd
// (rows of 64 bytes, no optimizer state), batch 256 with 32 negatives in
// chunks of 64, a window of 4 batches, one epoch, 1 thread, seed 9.
trainer::TrainOptions BudgetLinkOptions(const std::string& dataset);

// Small, fast options on a synthetic dataset.
trainer::TrainOptions SmallOptions(const std::string& dataset, const std::string& model, bool full_graph);

}  // namespace foresight::testing
