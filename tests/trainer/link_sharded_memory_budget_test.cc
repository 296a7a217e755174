// The shallow link models on several ranks under a per-rank
// --memory-budget: under `mpirun -np 2` (tests/trainer/CMakeLists.txt)
// each rank plans its own shard of a generated graph's 200,000 entities
// (rows of 64 bytes), its part of the batches and the sharded step's
// exchanges. --plan-only reports every rank's cache and the largest
// rank's minimum alike on every rank; a budget below it is refused on
// every rank naming it; the disk store behind the cache the plan leaves
// (a fraction of each shard) trains the losses of the same ranks with
// that cache given by --cache-size, bit for bit, and one rank's within the
// sharded tests' 1e-5. Run as one process (the discovered test) the world
// path is the one-rank path. mpi_link_memory_budget.cmake checks the
// ranks' peak RSS through the CLI.
#include <cmath>
#include <cstdio>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "foresight/core/communicator.h"
#include "foresight/trainer/trainer.h"
#include "sharded_test_util.h"
#include "trainer_test_util.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

constexpr int64_t kEntities = 200000;
constexpr int64_t kRowBytes = 64;  // 16 floats, sgd: no optimizer state

class LinkShardedMemoryBudgetTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();  // every rank its own copy of the same graph
    ASSERT_OK(testing::GenerateBudgetLinkGraph(dir_->File("graph"), kEntities));
  }
  static void TearDownTestSuite() { delete dir_; }

  static TrainOptions Options() {
    TrainOptions o = testing::BudgetLinkOptions(dir_->File("graph"));
    o.reciprocal = true;  // the graph's one relation and its reverse: a relation row on each of 2 ranks
    o.table_store = "disk";
    o.table_dir = dir_->path();
    return o;
  }

  static TrainSummary Plan(TrainOptions o, Communicator* comm) {
    o.plan_only = true;
    const TrainedRun run = TrainOn(o, comm);
    EXPECT_OK(run.status);
    return run.summary;
  }

  static testing::TempDir* dir_;
};
testing::TempDir* LinkShardedMemoryBudgetTest::dir_ = nullptr;

// The cache rows the plan gave each rank, from "rank r X MiB (k of n rows)"
// (several ranks) or ": X MiB (k rows)" (one).
std::vector<int64_t> PlannedCacheRows(const std::string& plan, std::vector<int64_t>* shard_rows) {
  std::vector<int64_t> rows;
  const std::regex cache("\\(([0-9]+)(?: of ([0-9]+))? rows\\)");
  for (std::sregex_iterator it(plan.begin(), plan.end(), cache), end; it != end; ++it) {
    rows.push_back(std::stoll((*it)[1]));
    shard_rows->push_back((*it)[2].matched ? std::stoll((*it)[2]) : kEntities);
  }
  return rows;
}

TEST_F(LinkShardedMemoryBudgetTest, EveryRankReportsThePlanAndBudgetsBelowTheLargestMinimumAreRefused) {
  StatusOr<Communicator*> world = WorldCommunicator();
  ASSERT_OK(world.status());
  const int ranks = (*world)->size();
  const TrainSummary plan = Plan(Options(), *world);
  for (const char* item : {"memory plan of", "baseline", "disk store buffers", "cache index", "lookahead batches",
                           "bypass rows", "compute turn", "smallest --memory-budget this run accepts"}) {
    EXPECT_NE(plan.memory_plan.find(item), std::string::npos) << item << " in\n" << plan.memory_plan;
  }
  if (ranks > 1) {
    for (const std::string& item : {"row-wise on " + std::to_string(ranks) + " ranks",
                                   std::string("exchanges (ids, rows, gradients)"),
                                   std::string("the largest of the " + std::to_string(ranks) + " ranks")}) {
      EXPECT_NE(plan.memory_plan.find(item), std::string::npos) << item << " in\n" << plan.memory_plan;
    }
  }
  // The minimum is the largest rank's on every rank.
  ASSERT_GT(plan.minimum_budget_bytes, 0);
  ASSERT_LT(plan.minimum_budget_bytes, int64_t{1} << 30);
  int64_t sum = plan.minimum_budget_bytes;
  ASSERT_OK((*world)->AllReduceSum(&sum, 1));
  EXPECT_EQ(sum, ranks * plan.minimum_budget_bytes);
  if ((*world)->rank() == 0) std::printf("%d ranks: a rank's plan\n%s", ranks, plan.memory_plan.c_str());

  // Under a budget, every rank's cache (a fraction of its shard).
  TrainOptions o = Options();
  o.memory_budget = plan.minimum_budget_bytes + (3 << 19);
  std::vector<int64_t> shards;
  const std::vector<int64_t> caches = PlannedCacheRows(Plan(o, *world).memory_plan, &shards);
  ASSERT_EQ(static_cast<int>(caches.size()), ranks);
  for (int r = 0; r < ranks; ++r) {
    EXPECT_GT(caches[r], 0) << "rank " << r;
    EXPECT_LT(caches[r], shards[r]) << "rank " << r << ": its shard should not fit";
    EXPECT_NEAR(static_cast<double>(shards[r]), static_cast<double>(kEntities) / ranks, 1.0) << "rank " << r;
  }

  // Below the minimum: refused on every rank, naming the smallest budget
  // that works (a whole number of MiB), the same on every rank. It is the
  // plan's, or a MiB or two more: the baseline is the RSS measured at
  // each run's start, which grows a little over the runs of this process.
  o.memory_budget = plan.minimum_budget_bytes - (1 << 20);
  const Status refused = TrainOn(o, *world).status;
  EXPECT_ERROR_CONTAINS(refused, "memory_budget", "cannot hold the");
  std::smatch named;
  const std::string message = refused.message();
  ASSERT_TRUE(std::regex_search(message, named, std::regex("the smallest --memory-budget that works is ([0-9]+)\\.0 MiB")))
      << message;
  int64_t mib = std::stoll(named[1]);
  EXPECT_GE(mib, plan.minimum_budget_bytes >> 20) << message;
  EXPECT_LE(mib, (plan.minimum_budget_bytes >> 20) + 2) << message;
  int64_t mib_sum = mib;
  ASSERT_OK((*world)->AllReduceSum(&mib_sum, 1));
  EXPECT_EQ(mib_sum, ranks * mib) << "the ranks named different budgets";
}

TEST_F(LinkShardedMemoryBudgetTest, TheBudgetsCacheChangesMemoryNotTheLosses) {
  StatusOr<Communicator*> world = WorldCommunicator();
  ASSERT_OK(world.status());
  TrainOptions o = Options();
  o.memory_budget = Plan(o, *world).minimum_budget_bytes + (3 << 19);
  std::vector<int64_t> shards;
  const std::vector<int64_t> caches = PlannedCacheRows(Plan(o, *world).memory_plan, &shards);
  ASSERT_FALSE(caches.empty());
  const TrainedRun budget = TrainOn(o, *world);
  ASSERT_OK(budget.status);
  ASSERT_FALSE(budget.losses.empty());

  // The same ranks with rank 0's planned cache given instead: the same
  // losses bit for bit (a cache changes which rows are read, not values).
  TrainOptions given = o;
  given.memory_budget = 0;
  given.cache_size = caches[0] * kRowBytes;
  const TrainedRun cached = TrainOn(given, *world);
  ASSERT_OK(cached.status);
  EXPECT_EQ(budget.losses, cached.losses);
  EXPECT_EQ(budget.summary.test_mrr, cached.summary.test_mrr);

  // One rank, everything in memory: the sharded tests' tolerance.
  std::unique_ptr<Communicator> single = MakeSingleProcessCommunicator();
  TrainOptions one = Options();
  one.table_store = "memory";
  const TrainedRun reference = TrainOn(one, single.get());
  ASSERT_OK(reference.status);
  ASSERT_EQ(budget.losses.size(), reference.losses.size());
  const double worst = testing::ExpectLossesNear(budget.losses, reference.losses, reference.losses.size(), "under the budget");
  EXPECT_NEAR(budget.summary.test_mrr, reference.summary.test_mrr, 0.002);
  std::printf("%d ranks under %lld MiB a rank (cache %lld of %lld rows on rank 0): %zu steps, largest relative loss "
              "difference from one rank %.3g, test MRR %.5f vs %.5f\n",
              (*world)->size(), static_cast<long long>(o.memory_budget >> 20), static_cast<long long>(caches[0]),
              static_cast<long long>(shards[0]), reference.losses.size(), worst, budget.summary.test_mrr,
              reference.summary.test_mrr);
}

}  // namespace
}  // namespace foresight::trainer
