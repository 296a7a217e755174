// The must-show: training through the out-of-core pipeline gives the same
// per-epoch loss and accuracies, bit for bit, as the in-memory store, for
// every feature store, cache policy, cache size, lookahead and thread count.
#include <gtest/gtest.h>

#include <string>

#include "foresight/trainer/trainer.h"
#include "pipeline_test_util.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

using foresight::testing::ExpectSameResults;
using foresight::testing::kPipelineFeatureBytes;
using foresight::testing::TrainHistory;

// reference_: the in-memory store with no cache (the direct row path).
class PipelineEquivalenceTest : public foresight::testing::PipelineSuite {
 protected:
  static void SetUpTestSuite() {
    PipelineSuite::SetUpTestSuite();
    TrainOptions o = Options();
    o.feature_store = "memory";
    o.cache_size = 0;
    reference_ = new std::vector<EpochMetrics>(TrainHistory(o));
  }
  static void TearDownTestSuite() {
    delete reference_;
    reference_ = nullptr;
    PipelineSuite::TearDownTestSuite();
  }

  static std::vector<EpochMetrics>* reference_;
};
std::vector<EpochMetrics>* PipelineEquivalenceTest::reference_ = nullptr;

TEST_F(PipelineEquivalenceTest, ReferenceTrains) {
  ASSERT_EQ(reference_->size(), 3u);
  EXPECT_LT(reference_->back().loss, reference_->front().loss);
  for (const EpochMetrics& m : *reference_) {
    EXPECT_EQ(m.cache_hits, 0);  // no cache: every row is a miss
    EXPECT_EQ(m.cache_misses, m.rows_requested);
  }
}

TEST_F(PipelineEquivalenceTest, DiskWithFivePercentCacheEqualsMemoryForEachPolicy) {
  for (const char* policy : {"lookahead", "lru", "static"}) {
    TrainOptions o = Options();
    o.feature_store = "disk";
    o.cache_policy = policy;
    o.cache_size = kPipelineFeatureBytes / 20;
    const std::vector<EpochMetrics> h = TrainHistory(o);
    ExpectSameResults(*reference_, h, std::string("disk, 5% cache, ") + policy);
    int64_t hits = 0;
    for (const EpochMetrics& m : h) hits += m.cache_hits;
    EXPECT_GT(hits, 0) << policy << ": the cache served nothing";
  }
}

TEST_F(PipelineEquivalenceTest, MmapAndNoCacheEqualMemory) {
  TrainOptions o = Options();
  o.feature_store = "mmap";
  o.cache_size = kPipelineFeatureBytes / 20;
  ExpectSameResults(*reference_, TrainHistory(o), "mmap, 5% cache");
  o.cache_size = 0;
  ExpectSameResults(*reference_, TrainHistory(o), "mmap, no cache");
  o.feature_store = "disk";
  ExpectSameResults(*reference_, TrainHistory(o), "disk, no cache");
}

TEST_F(PipelineEquivalenceTest, ThreadsAndLookaheadDoNotChangeResults) {
  for (int threads : {1, 2}) {
    for (int lookahead : {0, 3, 40}) {
      TrainOptions o = Options();
      o.feature_store = "disk";
      o.cache_size = kPipelineFeatureBytes / 20;
      o.threads = threads;
      o.lookahead = lookahead;
      ExpectSameResults(*reference_, TrainHistory(o),
                        "threads " + std::to_string(threads) + ", lookahead " + std::to_string(lookahead));
    }
  }
}

TEST_F(PipelineEquivalenceTest, TinyAndWholeCachesEqualMemory) {
  // One row of cache (nearly every row bypasses) and room for every row.
  for (int64_t cache : {int64_t{64}, kPipelineFeatureBytes}) {
    TrainOptions o = Options();
    o.feature_store = "disk";
    o.cache_size = cache;
    ExpectSameResults(*reference_, TrainHistory(o), "cache " + std::to_string(cache) + " bytes");
  }
}

TEST_F(PipelineEquivalenceTest, ResumeRestartsThePipelineAtTheResumedEpoch) {
  TrainOptions o = Options();
  o.feature_store = "disk";
  o.cache_size = kPipelineFeatureBytes / 20;
  o.checkpoint_dir = dir().File("ckpt");
  o.epochs = 2;  // then resume with a warm start from epoch 3's first batch
  ASSERT_EQ(TrainHistory(o).size(), 2u);
  o.epochs = 3;
  o.resume = true;
  o.cache_policy = "lru";  // the cache may change on resume: results do not
  const std::vector<EpochMetrics> resumed = TrainHistory(o);
  ASSERT_EQ(resumed.size(), 1u);
  ExpectSameResults({reference_->back()}, resumed, "resumed epoch 3");
}

}  // namespace
}  // namespace foresight::trainer
