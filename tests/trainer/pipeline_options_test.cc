// Bad combinations of the out-of-core options, an impossible memory budget
// and a truncated features file give clear errors naming the option or file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

#include "foresight/trainer/trainer.h"
#include "pipeline_test_util.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

using foresight::testing::kPipelineFeatureBytes;
using foresight::testing::PipelineOptions;

TEST(PipelineOptionsTest, BadValuesAndCombinationsNameTheOption) {
  const TrainOptions base = PipelineOptions("some/dataset");
  ASSERT_OK(base.Validate());
  struct Case {
    void (*change)(TrainOptions*);
    std::vector<std::string> message;
  };
  const Case cases[] = {
      {[](TrainOptions* o) { o->feature_store = "ssd"; }, {"feature_store", "'ssd'", "memory, mmap, disk"}},
      {[](TrainOptions* o) { o->cache_policy = "belady"; }, {"cache_policy", "'belady'", "lookahead, lru, static"}},
      {[](TrainOptions* o) { o->cache_size = -2; }, {"cache_size", "-2"}},
      {[](TrainOptions* o) { o->lookahead = -2; }, {"lookahead", "-2"}},
      {[](TrainOptions* o) { o->io_depth = 0; }, {"io_depth", "0"}},
      {[](TrainOptions* o) { o->memory_budget = -1; }, {"memory_budget", "-1"}},
      {[](TrainOptions* o) { o->order = "metis"; }, {"order", "'metis'", "random, partition"}},
      {[](TrainOptions* o) { o->sampling = "some"; }, {"sampling", "'some'", "full, resident"}},
      {[](TrainOptions* o) { o->resident_partitions = -3; }, {"resident_partitions", "-3"}},
      {[](TrainOptions* o) { o->sampling = "resident"; }, {"sampling: resident", "order = partition"}},
      {[](TrainOptions* o) { o->read_gap = -2; }, {"read_gap", "-2"}},
      {[](TrainOptions* o) { o->companion_span = 6000; }, {"companion_span", "multiple of 4096", "6000"}},
      {[](TrainOptions* o) { o->hot_rank = "out-degree"; }, {"hot_rank", "'out-degree'", "in-degree, halo"}},
      {[](TrainOptions* o) { o->hot_rank = "halo"; }, {"hot_rank", "order partition", "random"}},
      {[](TrainOptions* o) {
         o->full_graph = true;
         o->feature_store = "disk";
       },
       {"feature_store: disk", "mini-batch"}},
      {[](TrainOptions* o) {
         o->full_graph = true;
         o->order = "partition";
       },
       {"order: partition", "mini-batch"}},
      {[](TrainOptions* o) {
         o->memory_budget = 1 << 20;
         o->cache_size = 2 << 20;
       },
       {"cache_size", "exceeds memory_budget"}},
  };
  for (const Case& c : cases) {
    TrainOptions o = base;
    c.change(&o);
    const Status s = o.Validate();
    ASSERT_FALSE(s.ok());
    for (const std::string& part : c.message) {
      EXPECT_NE(s.message().find(part), std::string::npos) << "'" << s.message() << "' lacks '" << part << "'";
    }
  }
}

// lookahead, read_gap and companion_span default to auto: the wide reads
// measured on partition-ordered graphs (64 batches, 12 KiB, 64 KiB) where
// the GNN's node features come from the disk store through the lookahead
// cache under order partition, the old defaults (32, 0, the 4 KiB page)
// everywhere else; a value given is kept.
TEST(PipelineOptionsTest, AutoReadsAreWideOnlyForTheDiskStoreUnderPartitionOrder) {
  TrainOptions o = PipelineOptions("some/dataset");
  o.feature_store = "disk";
  o.order = "partition";
  ASSERT_OK(o.Validate());
  EXPECT_TRUE(o.PartitionDiskReads());
  EXPECT_EQ(o.EffectiveLookahead(), 64);
  EXPECT_EQ(o.EffectiveReadGap(), 12 << 10);
  EXPECT_EQ(o.EffectiveCompanionSpan(), 64 << 10);
  struct Case {
    const char* what;
    void (*change)(TrainOptions*);
  };
  const Case narrow[] = {
      {"random order", [](TrainOptions* p) { p->order = "random"; }},
      {"mmap store", [](TrainOptions* p) { p->feature_store = "mmap"; }},
      {"memory store", [](TrainOptions* p) { p->feature_store = "memory"; }},
      {"lru cache", [](TrainOptions* p) { p->cache_policy = "lru"; }},
      {"link task", [](TrainOptions* p) { p->task = "link"; }},
      {"dlrm", [](TrainOptions* p) { p->model = "dlrm"; }},
  };
  for (const Case& c : narrow) {
    TrainOptions n = o;
    c.change(&n);
    EXPECT_FALSE(n.PartitionDiskReads()) << c.what;
    EXPECT_EQ(n.EffectiveLookahead(), 32) << c.what;
    EXPECT_EQ(n.EffectiveReadGap(), 0) << c.what;
    EXPECT_EQ(n.EffectiveCompanionSpan(), 4096) << c.what;
  }
  o.lookahead = 8;
  o.read_gap = 0;
  o.companion_span = 4096;
  EXPECT_EQ(o.EffectiveLookahead(), 8);
  EXPECT_EQ(o.EffectiveReadGap(), 0);
  EXPECT_EQ(o.EffectiveCompanionSpan(), 4096);
}

using PipelineDatasetErrorsTest = foresight::testing::FreshPipelineDatasetTest;

TEST_F(PipelineDatasetErrorsTest, BudgetTooSmallListsTheEstimate) {
  TrainOptions o = Options();
  o.feature_store = "disk";
  o.memory_budget = 64 << 10;  // 64 KiB: less than the process itself
  TrainSummary s;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "memory_budget: 64.0 KiB cannot hold", "baseline", "topology",
                        "model + optimizer", "batches in flight", "evaluation", "raise --memory-budget");
}

TEST_F(PipelineDatasetErrorsTest, BudgetSizesTheCache) {
  TrainOptions o = Options();
  o.feature_store = "disk";
  o.epochs = 1;
  o.memory_budget = int64_t{4} << 30;  // roomy: the cache gets what is left, i.e. every row
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  ASSERT_EQ(s.history.size(), 1u);
  EXPECT_GT(s.history[0].cache_hits, 0);
}

TEST_F(PipelineDatasetErrorsTest, TruncatedFeaturesFileNamesTheFile) {
  const std::string features = FeaturesFile();
  ASSERT_EQ(truncate(features.c_str(), kPipelineFeatureBytes / 2), 0);
  TrainOptions o = Options();
  o.feature_store = "disk";
  TrainSummary s;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "features.npy");
}

}  // namespace
}  // namespace foresight::trainer
