// `train --task link` under --memory-budget on a generated graph whose
// entity table is larger than the budget's room: the plan itemises the run
// and names the smallest budget that works, budgets below it are refused
// with it, and the disk store behind the cache the budget leaves trains
// the memory store's per-step losses bit for bit at 1 and 2 threads.
#include <string>
#include <vector>

#include "foresight/trainer/trainer.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

using foresight::testing::StepLosses;

constexpr int64_t kEntities = 200000;

class LinkMemoryBudgetTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    ASSERT_OK(testing::GenerateBudgetLinkGraph(dir_->File("graph"), kEntities));
  }
  static void TearDownTestSuite() { delete dir_; }

  // Rows of 64 bytes: the table is 12.8 MB.
  static TrainOptions Options() { return testing::BudgetLinkOptions(dir_->File("graph")); }


  static TrainSummary Plan(TrainOptions o) {
    o.plan_only = true;
    TrainSummary s;
    const Status st = Train(o, &s);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return s;
  }

  static testing::TempDir* dir_;
};
testing::TempDir* LinkMemoryBudgetTest::dir_ = nullptr;

TEST_F(LinkMemoryBudgetTest, PlanItemisesTheRunAndBudgetsBelowItsMinimumAreRefused) {
  TrainOptions o = Options();
  o.table_store = "disk";
  const TrainSummary plan = Plan(o);
  for (const char* item : {"baseline", "triples (mapped)", "epoch orders", "evaluation candidates and filters",
                           "disk store buffers", "cache index", "lookahead batches", "bypass rows", "compute turn",
                           "smallest --memory-budget this run accepts"}) {
    EXPECT_NE(plan.memory_plan.find(item), std::string::npos) << item << " in\n" << plan.memory_plan;
  }
  // Nothing but the table grows with the entities: the disk store's plan
  // holds no term of 8 bytes an entity or more (the lookahead planner
  // indexes the window's keys only).
  EXPECT_LT(plan.minimum_budget_bytes - plan.minimum_budget_bytes % (1 << 20), int64_t{1} << 30);
  ASSERT_GT(plan.minimum_budget_bytes, 0);
  o.memory_budget = plan.minimum_budget_bytes / 2;
  TrainSummary s;
  testing::ExpectErrorContains(Train(o, &s), "half the minimum",
                               {"cannot hold the run's minimum", "the smallest --memory-budget that works is",
                                "baseline", "cache index"});
  // lru keeps an array over every entity: 8 bytes each, in its plan.
  o.cache_policy = "lru";
  o.memory_budget = 0;
  const TrainSummary lru = Plan(o);
  EXPECT_GT(lru.minimum_budget_bytes, plan.minimum_budget_bytes) << lru.memory_plan;
  // The memory store holds the table: it is an item, and a budget below it
  // is refused with the smallest that works.
  o = Options();
  const TrainSummary memory = Plan(o);
  EXPECT_NE(memory.memory_plan.find("tables (memory store)"), std::string::npos) << memory.memory_plan;
  EXPECT_GE(memory.minimum_budget_bytes, kEntities * 64);
  o.memory_budget = memory.minimum_budget_bytes - (8 << 20);
  testing::ExpectErrorContains(Train(o, &s), "memory store below its table",
                               {"the smallest --memory-budget that works is", "--table-store disk"});
}

TEST_F(LinkMemoryBudgetTest, DiskStoreUnderATinyBudgetEqualsMemoryBitForBit) {
  for (int threads : {1, 2}) {
    TrainOptions o = Options();
    o.threads = threads;
    o.table_store = "disk";
    // A budget 1.5 MiB above the minimum: a cache of about 12,000 of the
    // 200,000 rows (each slot pays its row and its index entry).
    o.memory_budget = Plan(o).minimum_budget_bytes + (3 << 19);
    const std::vector<double> disk = StepLosses(o);
    o.memory_budget = 0;
    o.table_store = "memory";
    const std::vector<double> memory = StepLosses(o);
    ASSERT_FALSE(memory.empty());
    EXPECT_EQ(disk, memory) << threads << " threads";
  }
}

}  // namespace
}  // namespace foresight::trainer
