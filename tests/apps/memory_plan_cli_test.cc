// `foresight train --plan-only` (e2e): the itemised memory plan, what
// scales with the graph and what with the batch, and the smallest budget,
// which a run below it is refused at. memory_peak_cli_test.cc (slow)
// checks the plan against the measured peak RSS of real runs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

using testing::Quote;

// 20k nodes x 64 f32 features.
class MemoryPlanCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    const testing::CliResult r = testing::RunForesight(
        "generate graph --output " + Quote(Data()) +
        " --nodes 20000 --edges 200000 --features 64 --train-frac 0.3 --val-frac 0.05 --test-frac 0.05"
        " --threads 2 --quiet");
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string Data() { return dir_->File("g"); }

  static std::string TrainArgs(const std::string& extra) {
    return "train " + Quote(Data()) + " --feature-store disk --epochs 1 --threads 2 " + extra;
  }

  // The smallest budget --plan-only reports for `extra`, in bytes.
  static int64_t MinimumBudget(const std::string& extra, std::string* plan) {
    const testing::CliResult r = testing::RunForesight(TrainArgs(extra + " --plan-only"));
    EXPECT_EQ(r.code, 0) << r.err;
    *plan = r.out;
    return testing::SmallestBudgetInPlan(r.out);
  }

  static testing::TempDir* dir_;
};

testing::TempDir* MemoryPlanCliTest::dir_ = nullptr;

TEST_F(MemoryPlanCliTest, PlanOnlyItemisesAndNamesTheMinimum) {
  std::string plan;
  const int64_t minimum = MinimumBudget("", &plan);
  ASSERT_GT(minimum, 0) << plan;
  for (const char* part : {"baseline", "topology", "planner index", "batches in flight", "compute turn",
                           "scales with the graph", "scales with the batch", "evaluation: chunks of",
                           "smallest --memory-budget"}) {
    EXPECT_NE(plan.find(part), std::string::npos) << part << " in:\n" << plan;
  }
  // Larger batches need more: the batch terms scale.
  std::string big_plan;
  EXPECT_GT(MinimumBudget("--batch-size 4096", &big_plan), minimum) << big_plan;
  const testing::CliResult help = testing::RunForesight("help train");
  EXPECT_NE(help.out.find("--plan-only"), std::string::npos) << help.out;
  // Below the minimum the run is refused, listing the plan.
  const testing::CliResult refused =
      testing::RunForesight(TrainArgs("--memory-budget " + std::to_string((minimum >> 20) - 16) + "M"));
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.err.find("cannot hold the run's minimum"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace foresight
