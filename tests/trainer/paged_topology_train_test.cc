// Training with --topology paged (the samplers read the CSR pages of each
// call into anonymous memory and free them after) gives the same losses and accuracies, bit for bit, as the
// mapped CSR for the same seed, with any feature store (the labels and
// split ids are paged with it); the memory plan then counts the topology
// and the label pages per batch, not per graph; the option is checked.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "foresight/storage/dataset.h"
#include "foresight/trainer/trainer.h"
#include "pipeline/memory_plan.h"
#include "pipeline_test_util.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

using foresight::testing::ExpectSameResults;
using foresight::testing::kPipelineFeatureBytes;
using foresight::testing::TrainHistory;

class PagedTopologyTrainTest : public foresight::testing::PipelineSuite {};

TEST_F(PagedTopologyTrainTest, SameResultsAsTheMappedCsr) {
  for (const char* store : {"memory", "disk"}) {
    TrainOptions o = Options();
    o.feature_store = store;
    o.cache_size = kPipelineFeatureBytes / 20;
    const std::vector<EpochMetrics> mapped = TrainHistory(o);
    ASSERT_EQ(mapped.size(), 3u);
    EXPECT_LT(mapped.back().loss, mapped.front().loss);
    o.topology = "paged";
    ExpectSameResults(mapped, TrainHistory(o), std::string("paged topology, ") + store + " store");
  }
}

// Every model, and evaluation (layer-wise, full neighbourhoods: the
// evaluation sampler is paged too), with the guard on: a read of a
// topology page that the samplers did not load crashes the test instead
// of reading zeros.
TEST_F(PagedTopologyTrainTest, EveryModelAndEvaluationEqualsMappedUnderTheGuard) {
  for (const char* model : {"sage", "gcn", "gat"}) {
    TrainOptions o = Options();
    o.model = model;
    o.epochs = 2;
    o.feature_store = "disk";
    o.cache_size = kPipelineFeatureBytes / 20;
    const std::vector<EpochMetrics> mapped = TrainHistory(o);
    ASSERT_EQ(mapped.size(), 2u);
    EXPECT_GT(mapped.back().test_acc, 0.0) << model;
    o.topology = "paged";
    ASSERT_EQ(::setenv("FORESIGHT_TOPOLOGY_GUARD", "1", 1), 0);
    const std::vector<EpochMetrics> paged = TrainHistory(o);
    ASSERT_EQ(::unsetenv("FORESIGHT_TOPOLOGY_GUARD"), 0);
    ExpectSameResults(mapped, paged, std::string("paged topology (guarded), ") + model);
  }
}

TEST_F(PagedTopologyTrainTest, PagedUnderABudgetEqualsMapped) {
  TrainOptions o = Options();
  o.feature_store = "disk";
  o.memory_budget = int64_t{1} << 30;
  const std::vector<EpochMetrics> mapped = TrainHistory(o);
  o.topology = "paged";
  ExpectSameResults(mapped, TrainHistory(o), "paged topology under a budget");
}

TEST_F(PagedTopologyTrainTest, MemoryPlanCountsPagesPerBatch) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<storage::Dataset> d, storage::Dataset::Open(DataDir()));
  TrainOptions o = Options();
  internal::MemoryInputs in;
  in.dataset = d.get();
  in.options = &o;
  const internal::MemoryEstimate mapped = internal::EstimateMemory(in);
  ASSERT_FALSE(mapped.items.empty());
  // Each term by name, with what it scales with.
  auto scale_of = [](const internal::MemoryEstimate& e, const std::string& name) {
    for (const internal::MemoryItem& i : e.items) {
      if (i.name == name) return std::string(internal::MemoryScaleName(i.scale));
    }
    return std::string("missing");
  };
  EXPECT_EQ(scale_of(mapped, "topology"), internal::MemoryScaleName(internal::MemoryScale::kGraph)) << mapped.Describe();
  o.topology = "paged";
  const internal::MemoryEstimate paged = internal::EstimateMemory(in);
  EXPECT_EQ(scale_of(paged, "topology"), "missing") << paged.Describe();
  EXPECT_EQ(scale_of(paged, "topology pages"), internal::MemoryScaleName(internal::MemoryScale::kBatch))
      << paged.Describe();
  // Labels and split ids are paged too: the copies the orders and
  // evaluation keep scale with the graph, the label pages with the batch.
  EXPECT_EQ(scale_of(paged, "labels and split ids"), "missing") << paged.Describe();
  EXPECT_EQ(scale_of(paged, "training and evaluation ids, evaluation labels"),
            internal::MemoryScaleName(internal::MemoryScale::kGraph))
      << paged.Describe();
  EXPECT_EQ(scale_of(paged, "label pages"), internal::MemoryScaleName(internal::MemoryScale::kBatch))
      << paged.Describe();
  auto bytes_of = [](const internal::MemoryEstimate& e, const std::string& name) {
    for (const internal::MemoryItem& i : e.items) {
      if (i.name == name) return i.bytes;
    }
    return int64_t{-1};
  };
  const int64_t eval_rows = d->val_ids().numel() + d->test_ids().numel();
  EXPECT_EQ(bytes_of(paged, "training and evaluation ids, evaluation labels"),
            d->train_ids().numel() * 8 + eval_rows * 16);
  // One batch's label pages, at most the whole array (this small graph's).
  EXPECT_EQ(bytes_of(paged, "label pages"), static_cast<int64_t>(d->labels().nbytes()));
  // The pages term grows with the batch, capped by the whole CSR (which
  // this small graph's batches of 32 reach).
  const int64_t csr = static_cast<int64_t>(d->indptr().nbytes() + d->indices().nbytes());
  EXPECT_EQ(internal::TopologyPagesBytes(in), csr);
  o.batch_size = 1;
  o.fanouts = {1};
  o.eval_batch_size = 1;
  const int64_t one = internal::TopologyPagesBytes(in);
  EXPECT_GT(one, 0);
  EXPECT_LT(one, csr);
  o.batch_size = 2;
  EXPECT_GT(internal::TopologyPagesBytes(in), one);
}

TEST(PagedTopologyOptionsTest, Checked) {
  TrainOptions o;
  o.dataset = "x";
  o.topology = "resident";
  testing::ExpectErrorContains(o.Validate(), "topology", {"'resident'", "mapped, paged"});
  o.topology = "paged";
  o.full_graph = true;
  testing::ExpectErrorContains(o.Validate(), "full graph", {"topology: paged", "mini-batch"});
}

}  // namespace
}  // namespace foresight::trainer
