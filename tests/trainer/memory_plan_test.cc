// The mini-batch trainer's memory plan and cache setup (trainer/src/
// pipeline): the static policy's rows (highest in-degree first, and the
// ones a static run really serves from its cache), the lookahead cache's
// static tier beside it, the automatic partition group, and how evaluation is sized inside the compute turn. The plan
// against a measured peak RSS is tests/apps/memory_plan_cli_test.cc's.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <vector>

#include "foresight/storage/dataset.h"
#include "foresight/trainer/feature_trace.h"
#include "foresight/trainer/trainer.h"
#include "pipeline/memory_plan.h"
#include "pipeline/pipeline_setup.h"
#include "pipeline_test_util.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

using foresight::testing::kPipelineNodes;
using foresight::testing::kPipelineRowBytes;
using internal::AutoGroupSize;
using internal::KeysByHaloDegree;
using internal::KeysByInDegree;

Tensor Indptr(const std::vector<int64_t>& degrees) {
  Tensor t = Tensor::Empty({static_cast<int64_t>(degrees.size()) + 1}, DType::kI64);
  int64_t* p = t.data<int64_t>();
  p[0] = 0;
  for (size_t i = 0; i < degrees.size(); ++i) p[i + 1] = p[i] + degrees[i];
  return t;
}

// The memory plan's inputs for `o` on its dataset (kept open here), with
// the pipeline dataset's feature rows.
struct PlanInputs {
  explicit PlanInputs(const TrainOptions& o) {
    auto opened = storage::Dataset::Open(o.dataset);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    if (!opened.ok()) return;
    dataset = std::move(opened).value();
    in.dataset = dataset.get();
    in.options = &o;
    in.row_bytes = kPipelineRowBytes;
  }
  std::unique_ptr<storage::Dataset> dataset;
  internal::MemoryInputs in;
};

TEST(KeysByInDegree, HighestFirstTiesBySmallerId) {
  //                              node: 0  1  2  3  4  5
  const Tensor indptr = Indptr({2, 7, 0, 7, 3, 2});
  EXPECT_EQ(KeysByInDegree(indptr, 6), (std::vector<int64_t>{1, 3, 4, 0, 5, 2}));
  EXPECT_EQ(KeysByInDegree(indptr, 3), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(KeysByInDegree(indptr, 100).size(), 6u);  // at most every node
  EXPECT_TRUE(KeysByInDegree(indptr, 0).empty());
  EXPECT_TRUE(KeysByInDegree(indptr, -5).empty());
}

// Halo ranking counts, for each node, the edges into other partitions'
// nodes that start at it; edges inside a partition do not count.
TEST(KeysByHaloDegree, CountsEdgesFromOtherPartitionsOnly) {
  // Partitions [0, 3) and [3, 6). In-neighbours by destination:
  //   0: 1 2 4   1: 0 4   2: 5   3: 1 1 4 5   4: 3   5: 2 0
  // Edges across partitions start at 4 (into 0 and 1: 2), 5 (into 2: 1),
  // 1 (into 3, twice: 2), 2 (into 5: 1), 0 (into 5: 1); node 3 has none.
  kernels::Csr g;
  g.indptr = Indptr({3, 2, 1, 4, 1, 2});
  const std::vector<int32_t> in = {1, 2, 4, 0, 4, 5, 1, 1, 4, 5, 3, 2, 0};
  g.indices = Tensor::Empty({static_cast<int64_t>(in.size())}, DType::kI32);
  std::copy(in.begin(), in.end(), g.indices.data<int32_t>());
  g.num_src = 6;
  const std::vector<int64_t> offsets = {0, 3, 6};
  // Scores 0:1 1:2 2:1 3:0 4:2 5:1: highest first, ties by smaller id.
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> all, KeysByHaloDegree(g, offsets, 6));
  EXPECT_EQ(all, (std::vector<int64_t>{1, 4, 0, 2, 5, 3}));
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> two, KeysByHaloDegree(g, offsets, 2));
  EXPECT_EQ(two, (std::vector<int64_t>{1, 4}));
  // One partition: no halo at all, so the ranking is by id.
  ASSERT_OK_AND_ASSIGN(std::vector<int64_t> one, KeysByHaloDegree(g, {0, 6}, 3));
  EXPECT_EQ(one, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_ERROR_CONTAINS(KeysByHaloDegree(g, {0, 5}, 3).status(), "offsets", "6 nodes");
}

TEST(AutoGroupSize, AsManyPartitionsAsTheCacheHoldsByTheLargest) {
  const std::vector<int64_t> offsets = {0, 10, 25, 30, 40};  // largest: 15 rows
  EXPECT_EQ(AutoGroupSize(offsets, 100, 0), 1);             // at least 1
  EXPECT_EQ(AutoGroupSize(offsets, 100, 1499), 1);
  EXPECT_EQ(AutoGroupSize(offsets, 100, 3000), 2);
  EXPECT_EQ(AutoGroupSize(offsets, 100, 4499), 2);
  EXPECT_EQ(AutoGroupSize(offsets, 100, 4500), 3);
  EXPECT_EQ(AutoGroupSize(offsets, 100, int64_t{1} << 40), 4);  // at most P
  EXPECT_EQ(AutoGroupSize(offsets, 0, int64_t{1} << 40), 1);    // no rows to cache
}

// A static cache of k rows holds the k rows of highest in-degree, filled
// once on the first plan: every request of one of them is a hit (but the
// first batch's, which the fill reads), every other a miss.
class StaticPolicyTest : public foresight::testing::PipelineSuite {};

TEST_F(StaticPolicyTest, ServesExactlyTheHighestInDegreeRows) {
  TrainOptions o = Options();
  o.feature_store = "disk";
  o.cache_policy = "static";
  o.epochs = 1;
  const int64_t k = kPipelineNodes / 10;
  o.cache_size = k * kPipelineRowBytes;
  auto dataset = storage::Dataset::Open(o.dataset);
  ASSERT_OK(dataset.status());
  const std::vector<int64_t> top = KeysByInDegree((*dataset)->indptr(), k);
  const std::set<int64_t> cached(top.begin(), top.end());
  auto trace = SampleFeatureTrace(o, 0);
  ASSERT_OK(trace.status());
  ASSERT_EQ(std::vector<int64_t>(trace->keys_by_in_degree.begin(), trace->keys_by_in_degree.begin() + k), top);
  int64_t expected_hits = 0, requested = 0;
  for (size_t b = 0; b < trace->batches.size(); ++b) {
    requested += static_cast<int64_t>(trace->batches[b].size());
    if (b == 0) continue;  // the fill's reads are the first batch's misses
    for (int64_t key : trace->batches[b]) expected_hits += cached.count(key);
  }
  // The lowest in-degree rows would serve fewer: the choice matters.
  const std::vector<int64_t> all = KeysByInDegree((*dataset)->indptr(), kPipelineNodes);
  const std::set<int64_t> lowest(all.end() - k, all.end());
  int64_t lowest_hits = 0;
  for (const std::vector<int64_t>& batch : trace->batches) {
    for (int64_t key : batch) lowest_hits += lowest.count(key);
  }
  ASSERT_GT(expected_hits, lowest_hits + lowest_hits / 2);

  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  ASSERT_EQ(s.history.size(), 1u);
  EXPECT_EQ(s.history[0].rows_requested, requested);
  EXPECT_EQ(s.history[0].cache_hits, expected_hits);
  EXPECT_EQ(s.history[0].cache_misses, requested - expected_hits);
}

// The lookahead cache's static tier (--hot-fraction): the same losses at
// every split; all of the cache static is exactly the static policy's
// hits and reads; none is the plain lookahead cache; auto (-1) is
// kAutoHotFraction; a tier beside another policy is refused.
TEST_F(StaticPolicyTest, AHotTierBesideLookaheadKeepsTheResults) {
  TrainOptions o = Options();
  o.feature_store = "disk";
  o.epochs = 2;
  o.cache_size = kPipelineNodes / 10 * kPipelineRowBytes;
  o.cache_policy = "static";
  const std::vector<EpochMetrics> fixed = foresight::testing::TrainHistory(o);
  o.cache_policy = "lookahead";
  o.hot_fraction = 0;
  const std::vector<EpochMetrics> plain = foresight::testing::TrainHistory(o);
  o.hot_fraction = 1;
  const std::vector<EpochMetrics> all_hot = foresight::testing::TrainHistory(o);
  o.hot_fraction = 0.5f;
  const std::vector<EpochMetrics> half = foresight::testing::TrainHistory(o);
  o.hot_fraction = kAutoHotFraction;
  const std::vector<EpochMetrics> auto_value = foresight::testing::TrainHistory(o);
  o.hot_fraction = -1;
  const std::vector<EpochMetrics> automatic = foresight::testing::TrainHistory(o);
  ASSERT_EQ(fixed.size(), 2u);
  foresight::testing::ExpectSameResults(plain, fixed, "static policy");
  foresight::testing::ExpectSameResults(plain, all_hot, "hot fraction 1");
  foresight::testing::ExpectSameResults(plain, half, "hot fraction 0.5");
  foresight::testing::ExpectSameResults(plain, automatic, "hot fraction auto");
  for (size_t e = 0; e < fixed.size(); ++e) {
    SCOPED_TRACE("epoch " + std::to_string(e + 1));
    EXPECT_EQ(all_hot[e].cache_hits, fixed[e].cache_hits);
    EXPECT_EQ(all_hot[e].cache_misses, fixed[e].cache_misses);
    EXPECT_EQ(all_hot[e].rows_read, fixed[e].rows_read);
    EXPECT_EQ(automatic[e].cache_hits, auto_value[e].cache_hits);
    EXPECT_EQ(automatic[e].rows_read, auto_value[e].rows_read);
  }
  // The tier changes which rows are cached (the comparisons above can fail).
  EXPECT_NE(half[1].cache_hits, plain[1].cache_hits);
  EXPECT_NE(half[1].cache_hits, all_hot[1].cache_hits);

  TrainSummary s;
  o.hot_fraction = 1.5f;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "hot_fraction: must be in [0, 1]");
  o.hot_fraction = 0.5f;
  o.cache_policy = "lru";
  EXPECT_ERROR_CONTAINS(Train(o, &s), "hot_fraction: a static tier beside the lookahead tier needs cache_policy "
                                      "lookahead, got lru");
}

// Evaluation under a budget runs in the compute turn: its chunk halves
// until two chunks fit beside the graph-sized part, not below 512, and
// its hidden layers get what is left.
TEST_F(StaticPolicyTest, EvaluationIsSizedToTheComputeTurn) {
  TrainOptions o = Options();
  o.memory_budget = int64_t{1} << 30;
  o.eval_batch_size = 8192;
  PlanInputs plan(o);
  ASSERT_TRUE(plan.dataset != nullptr);
  internal::MemoryInputs& in = plan.in;
  const internal::EvaluationPlan roomy = internal::PlanEvaluation(in, int64_t{1} << 30);
  EXPECT_EQ(roomy.chunk_size, 8192);
  EXPECT_EQ(roomy.total(), int64_t{1} << 30);  // the layers take the rest of the turn
  const internal::EvaluationPlan tight = internal::PlanEvaluation(in, roomy.chunk_bytes / 3 + roomy.graph_bytes);
  EXPECT_LT(tight.chunk_size, 8192);
  EXPECT_GE(tight.chunk_size, 512);
  EXPECT_LE(tight.chunk_bytes + tight.graph_bytes, roomy.chunk_bytes / 3 + roomy.graph_bytes);
  const internal::EvaluationPlan none = internal::PlanEvaluation(in, 0);
  EXPECT_EQ(none.chunk_size, 512);  // the floor: evaluation's item is then the larger
  EXPECT_EQ(none.layer_bytes, 0);    // every hidden layer in the scratch file
  o.eval_batch_size = 300;
  EXPECT_EQ(internal::PlanEvaluation(in, 0).chunk_size, 300);  // never above the option
}

// Under a budget evaluation runs in smaller chunks with its hidden layers
// in a scratch file: the same accuracies (and losses) as without one.
TEST_F(StaticPolicyTest, EvaluationUnderABudgetGivesTheSameResults) {
  TrainOptions o = Options();
  o.epochs = 2;
  o.eval_batch_size = 2000;  // one chunk for every layer without a budget
  o.feature_store = "disk";
  const std::vector<EpochMetrics> unbounded = foresight::testing::TrainHistory(o);
  o.memory_budget = int64_t{1} << 30;
  PlanInputs plan(o);
  ASSERT_TRUE(plan.dataset != nullptr);
  internal::MemoryInputs& in = plan.in;
  // The plan's compute turn at this batch size leaves the layers no RAM
  // and halves the chunk (checked, so the comparison means something).
  const internal::EvaluationPlan small = internal::PlanEvaluation(in, internal::EstimateMemory(in).compute_turn_bytes);
  EXPECT_LT(small.chunk_size, 2000);
  foresight::testing::ExpectSameResults(unbounded, foresight::testing::TrainHistory(o), "under a budget");
}

// The lookahead planner's index: a flat array over the nodes, or a map of
// the keys it holds (each slot's and the window's), whichever leaves the
// cache more rows under a budget, or costs less with --cache-size.
TEST_F(StaticPolicyTest, ThePlannerIndexTakesTheLayoutThatLeavesMoreCache) {
  TrainOptions o = Options();
  o.feature_store = "disk";
  o.batch_size = 8;
  o.fanouts = {2, 2};
  o.lookahead = 1;
  PlanInputs plan(o);
  ASSERT_TRUE(plan.dataset != nullptr);
  internal::MemoryInputs& in = plan.in;
  auto index_of = [](const internal::MemoryEstimate& e) {
    for (const internal::MemoryItem& i : e.items) {
      if (i.name.rfind("planner index", 0) == 0) return i;
    }
    return internal::MemoryItem{};
  };
  const int64_t flat = 24 * (kPipelineNodes + 1);
  // W + 1 batches at the fanouts' worst case: 8 seeds, 16 drawn, then 2 for each of those 24.
  const int64_t window_keys = 2 * (8 + 16 + 48);
  const int64_t records = cache::SlotRecordBytes(internal::PlannerShape(o, kPipelineNodes));
  // A budget a little above the rest: the map (7 KiB and 64 bytes a slot)
  // leaves more rows than the 47 KiB array.
  o.memory_budget = 1;
  const int64_t rest = internal::EstimateMemory(in).total() - internal::EstimateMemory(in).items.back().bytes;
  o.memory_budget = rest + 64 * 1024;
  internal::MemoryEstimate e = internal::EstimateMemory(in);
  EXPECT_EQ(index_of(e).scale, internal::MemoryScale::kBatch) << index_of(e).name;
  EXPECT_EQ(e.index_window_keys, window_keys);
  EXPECT_EQ(e.index_bytes_per_slot, 64);
  EXPECT_EQ(internal::FeatureSlotBytes(o, kPipelineNodes, e), records + 64);
  const int64_t left = o.memory_budget - rest;
  const int64_t window_rows = (left - index_of(e).bytes) / (kPipelineRowBytes + records + 64);
  EXPECT_GT(window_rows, (left - flat) / (kPipelineRowBytes + records));
  // A large budget: the array's 24 bytes a node cost less than 64 a slot.
  o.memory_budget = rest + (int64_t{64} << 20);
  e = internal::EstimateMemory(in);
  EXPECT_EQ(index_of(e).bytes, flat);
  EXPECT_EQ(index_of(e).scale, internal::MemoryScale::kGraph);
  EXPECT_EQ(e.index_window_keys, 0);
  EXPECT_EQ(internal::FeatureSlotBytes(o, kPipelineNodes, e), records);
  // --cache-size: the smaller of the two.
  o.memory_budget = 0;
  o.cache_size = 100 * kPipelineRowBytes;
  EXPECT_EQ(internal::EstimateMemory(in).index_window_keys, window_keys);
  o.cache_size = 1000 * kPipelineRowBytes;
  EXPECT_EQ(internal::EstimateMemory(in).index_window_keys, 0);
  // A window of more batches than the array costs.
  o.cache_size = 100 * kPipelineRowBytes;
  o.lookahead = 64;
  EXPECT_EQ(internal::EstimateMemory(in).index_window_keys, 0);
  // --planner-index says which, whatever they cost.
  o.planner_index = "window";
  EXPECT_EQ(internal::EstimateMemory(in).index_window_keys, std::min<int64_t>(kPipelineNodes, 65 * 72));
  o.lookahead = 1;
  o.planner_index = "flat";
  EXPECT_EQ(internal::EstimateMemory(in).index_window_keys, 0);
  // lru keeps its flat array whatever the window; a window index for it is
  // refused.
  o.planner_index = "auto";
  o.cache_policy = "lru";
  EXPECT_EQ(internal::EstimateMemory(in).index_window_keys, 0);
  o.planner_index = "window";
  EXPECT_ERROR_CONTAINS(o.Validate(), "planner_index: the window index is the lookahead policy's");
  o.planner_index = "sometimes";
  EXPECT_ERROR_CONTAINS(o.Validate(), "planner_index: 'sometimes' is not one of auto, flat, window");
}

// The plan counts the window that runs: with the auto lookahead on the
// disk store under the partition order, that of --lookahead 64 (its
// planner index and sampled batches in flight), elsewhere that of 32.
TEST_F(StaticPolicyTest, ThePlanCountsTheAutoWindow) {
  TrainOptions o = Options();
  o.feature_store = "disk";
  o.order = "partition";
  o.cache_size = 100 * kPipelineRowBytes;
  o.planner_index = "window";
  // Small batches, so that neither window's keys reach the node count.
  o.batch_size = 4;
  o.fanouts = {1, 1};
  PlanInputs plan(o);
  ASSERT_TRUE(plan.dataset != nullptr);
  internal::MemoryInputs& in = plan.in;
  auto items = [&in] {
    std::vector<std::pair<std::string, int64_t>> out;
    for (const internal::MemoryItem& i : internal::EstimateMemory(in).items) out.emplace_back(i.name, i.bytes);
    return out;
  };
  auto bytes_of = [](const std::vector<std::pair<std::string, int64_t>>& list, const std::string& prefix) {
    for (const auto& [name, bytes] : list) {
      if (name.rfind(prefix, 0) == 0) return bytes;
    }
    return int64_t{-1};
  };
  ASSERT_EQ(o.lookahead, -1);
  const auto automatic = items();
  o.lookahead = 64;
  EXPECT_EQ(automatic, items());
  o.lookahead = 32;
  const auto narrow = items();
  EXPECT_LT(bytes_of(narrow, "batches in flight"), bytes_of(automatic, "batches in flight"));
  EXPECT_LT(bytes_of(narrow, "planner index"), bytes_of(automatic, "planner index"));
  // The random order's auto window is 32.
  o.order = "random";
  const auto random32 = items();
  o.lookahead = -1;
  EXPECT_EQ(random32, items());
}

// A run whose planner indexes the window's keys trains as the memory store
// does (the plans do not depend on the index: planner_rules_test).
TEST_F(StaticPolicyTest, AWindowIndexedCacheGivesTheSameResults) {
  TrainOptions o = Options();
  o.batch_size = 8;
  o.fanouts = {2, 2};
  o.lookahead = 1;
  o.epochs = 1;
  const std::vector<EpochMetrics> memory = foresight::testing::TrainHistory(o);
  o.feature_store = "disk";
  o.cache_size = 100 * kPipelineRowBytes;
  PlanInputs plan(o);
  ASSERT_TRUE(plan.dataset != nullptr);
  internal::MemoryInputs& in = plan.in;
  ASSERT_GT(internal::EstimateMemory(in).index_window_keys, 0);  // the case under test
  const std::vector<EpochMetrics> windowed = foresight::testing::TrainHistory(o);
  foresight::testing::ExpectSameResults(memory, windowed, "window index");
  o.planner_index = "flat";
  ASSERT_EQ(internal::EstimateMemory(in).index_window_keys, 0);
  const std::vector<EpochMetrics> flat = foresight::testing::TrainHistory(o);
  ASSERT_EQ(windowed.size(), 1u);
  ASSERT_EQ(flat.size(), 1u);
  EXPECT_GT(windowed[0].cache_misses, 0);
  // The same plans: the same hits and reads, row for row.
  EXPECT_EQ(windowed[0].cache_hits, flat[0].cache_hits);
  EXPECT_EQ(windowed[0].cache_misses, flat[0].cache_misses);
  EXPECT_EQ(windowed[0].bytes_read, flat[0].bytes_read);
}

// The cache gets what the estimate leaves of the budget, no more; a budget
// that leaves nothing is refused listing the items.
TEST(PlanCacheBytes, TheCacheIsWhatTheEstimateLeaves) {
  internal::MemoryEstimate e;
  e.items = {{"baseline", 100 << 20, internal::MemoryScale::kFixed},
             {"batches in flight", 30 << 20, internal::MemoryScale::kBatch}};
  TrainOptions o;
  o.memory_budget = 512 << 20;
  auto cache = internal::PlanCacheBytes(o, e);
  ASSERT_OK(cache.status());
  EXPECT_EQ(*cache, (512 - 130) << 20);
  EXPECT_EQ(internal::MinimumBudget(e, 4096), 131 << 20);  // the items and one row, in whole MiB
  o.memory_budget = 130 << 20;
  EXPECT_ERROR_CONTAINS(internal::PlanCacheBytes(o, e).status(), "cannot hold the run's minimum", "baseline",
                        "batches in flight");
  o.memory_budget = 0;  // no budget, no cache_size: no cache
  ASSERT_OK(internal::PlanCacheBytes(o, e).status());
  EXPECT_EQ(*internal::PlanCacheBytes(o, e), 0);
}

}  // namespace
}  // namespace foresight::trainer
