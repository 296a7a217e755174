// The training display's text: the epoch summary with and without a cache
// and stages, and the bottleneck stage with its share.
#include "progress_reporter.h"

#include <gtest/gtest.h>

namespace foresight::trainer::internal {
namespace {

EpochMetrics Metrics() {
  EpochMetrics m;
  m.epoch = 3;
  m.loss = 0.12345;
  m.train_acc = 0.9;
  m.val_acc = 0.8;
  m.test_acc = 0.81;
  m.seeds_per_second = 12345;
  m.eval_seconds = 1.234;
  return m;
}

TEST(ProgressReporter, BottleneckIsTheBusiestStageAndItsShare) {
  EXPECT_EQ(Bottleneck({}), "");
  EXPECT_EQ(DescribeBottleneck({}), "");
  const std::vector<std::pair<std::string, StageSeconds>> stages = {
      {"sample", {1.0, 0.5}}, {"read", {6.0, 0.0}}, {"compute", {3.0, 2.0}}};
  EXPECT_EQ(Bottleneck(stages), "read");
  EXPECT_EQ(DescribeBottleneck(stages), "read 60%");
  // Nothing busy: a stage exists but no bottleneck is shown.
  EXPECT_EQ(DescribeBottleneck({{"sample", {0.0, 1.0}}}), "");
}

TEST(ProgressReporter, SummaryShowsPhasesWithoutStages) {
  EpochMetrics m = Metrics();
  m.sample_seconds = 1;
  m.gather_seconds = 1;
  m.forward_seconds = 1;
  m.backward_seconds = 1;
  EXPECT_EQ(EpochSummary(m),
            "loss 0.1235 train 0.9000 val 0.8000 test 0.8100 | " + FormatRate(12345, "seeds") +
                " | sample 25% gather 25% forward 25% backward 25% optimizer 0% | eval 1.23s");
}

TEST(ProgressReporter, SummaryShowsCacheAndBottleneckWithStages) {
  EpochMetrics m = Metrics();
  m.rows_requested = 100;
  m.cache_hits = 83;
  m.cache_misses = 17;
  m.bytes_read = int64_t{3} << 30;
  m.stages = {{"read", {2.0, 0.0}}, {"compute", {6.0, 0.0}}};
  m.sample_seconds = 5;  // phases give way to the bottleneck
  EXPECT_EQ(EpochSummary(m), "loss 0.1235 train 0.9000 val 0.8000 test 0.8100 | " + FormatRate(12345, "seeds") +
                                 " | cache 83% hits, 3.00 GiB read | bottleneck compute 75% | eval 1.23s");
  m.bytes_read = 5 << 20;
  EXPECT_NE(EpochSummary(m).find("cache 83% hits, 5.0 MiB read"), std::string::npos) << EpochSummary(m);
}

}  // namespace
}  // namespace foresight::trainer::internal
