// The training display's text: the epoch summary with and without a cache
// and stages, and the bottleneck stage with its share.
#include "progress_reporter.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

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
  m.cache_bytes = 1 << 20;
  m.bytes_read = int64_t{3} << 30;
  m.stages = {{"read", {2.0, 0.0}}, {"compute", {6.0, 0.0}}};
  m.sample_seconds = 5;  // phases give way to the bottleneck
  EXPECT_EQ(EpochSummary(m), "loss 0.1235 train 0.9000 val 0.8000 test 0.8100 | " + FormatRate(12345, "seeds") +
                                 " | cache 83% hits, 3.00 GiB read | bottleneck compute 75% | eval 1.23s");
  m.bytes_read = 5 << 20;
  EXPECT_NE(EpochSummary(m).find("cache 83% hits, 5.0 MiB read"), std::string::npos) << EpochSummary(m);
}

// Everything written to a tmpfile() sink.
std::string Contents(FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  return out;
}

ProgressOptions PlainSink(FILE* f) {
  ProgressOptions o;
  o.sink = f;
  o.mode = ProgressOptions::Mode::kPlain;
  o.plain_interval_s = 3600;  // only the final lines
  return o;
}

// The epoch line's time and rates are the metrics': 4 batches whose
// training took 8 s (the reporter's own clock saw microseconds) read
// "4 batch in 8.00s (0.5 batch/s)", beside the metrics' seeds/s and eval.
TEST(ProgressReporter, EpochLineTimesAreTheMetrics) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  EpochMetrics m = Metrics();
  m.epoch_seconds = 8.0;
  m.seeds_per_second = 512;
  m.eval_seconds = 2.5;
  {
    ProgressReporter reporter(10, PlainSink(f));
    for (int b = 0; b < 4; ++b) reporter.OnBatch(3, b, 4, 0.5);
    reporter.OnEpoch(m);
  }
  const std::string out = Contents(f);
  std::fclose(f);
  EXPECT_EQ(out, "epoch 3/10: 4 batch in 8.00s (" + FormatRate(0.5, "batch") +
                     ") | loss 0.1235 train 0.9000 val 0.8000 test 0.8100 | " + FormatRate(512, "seeds") +
                     " | eval 2.50s\n");
  EXPECT_EQ(EpochLine("epoch 1/1", 3, m).rfind("epoch 1/1: 3 batch in 8.00s (", 0), 0u);
  m.epoch_seconds = 476.0;
  EXPECT_NE(EpochLine("e", 1, m).find("in 7m56s"), std::string::npos) << EpochLine("e", 1, m);
}

// No cache: the rows read are shown, but no hit rate ("cache 0% hits"
// would say a cache missed every row).
TEST(ProgressReporter, SummaryWithoutCacheShowsNoHitRate) {
  EpochMetrics m = Metrics();
  m.rows_requested = 100;
  m.cache_misses = 100;
  m.bytes_read = 5 << 20;
  m.cache_bytes = 0;
  EXPECT_EQ(EpochSummary(m).find("hits"), std::string::npos) << EpochSummary(m);
  EXPECT_NE(EpochSummary(m).find(" | 5.0 MiB read | "), std::string::npos) << EpochSummary(m);
  m.cache_bytes = 1 << 20;
  EXPECT_NE(EpochSummary(m).find("cache 0% hits, 5.0 MiB read"), std::string::npos) << EpochSummary(m);
}

TEST(ProgressReporter, ResumeSaysWhichEpochComesNext) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    ProgressReporter reporter(10, PlainSink(f));
    reporter.OnResume(4, "/tmp/ckpt");
  }
  const std::string out = Contents(f);
  std::fclose(f);
  EXPECT_EQ(out, "resuming from epoch 5 of 10: 4 epochs done in /tmp/ckpt\n");
}

}  // namespace
}  // namespace foresight::trainer::internal
