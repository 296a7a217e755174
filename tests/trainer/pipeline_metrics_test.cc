// The per-epoch metrics of the pipeline: cache and I/O counters and the
// stages' busy / waiting seconds, attributed by batch.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "foresight/trainer/trainer.h"
#include "pipeline_test_util.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

using foresight::testing::EpochLines;
using foresight::testing::kPipelineFeatureBytes;
using foresight::testing::TrainHistory;

using PipelineMetricsTest = foresight::testing::PipelineSuite;

TEST_F(PipelineMetricsTest, EpochLinesCarryCacheIoAndStageTimes) {
  TrainOptions o = Options();
  o.feature_store = "disk";
  o.cache_size = kPipelineFeatureBytes / 20;
  o.metrics_file = dir().File("disk.jsonl");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  const std::vector<nlohmann::json> lines = EpochLines(o.metrics_file);
  ASSERT_EQ(lines.size(), 3u);
  const std::set<std::string> stages = {"sample", "plan", "read", "assemble", "compute", "write_back"};
  for (const nlohmann::json& j : lines) {
    for (const char* key : {"cache_hits", "cache_misses", "bytes_read", "bytes_written", "rows_requested"}) {
      ASSERT_TRUE(j.contains(key)) << key << " missing from " << j.dump();
      EXPECT_GE(j[key].get<int64_t>(), 0) << key;
    }
    EXPECT_EQ(j["cache_hits"].get<int64_t>() + j["cache_misses"].get<int64_t>(), j["rows_requested"].get<int64_t>());
    EXPECT_GT(j["rows_requested"].get<int64_t>(), 0);
    const int64_t bytes_read = j["bytes_read"].get<int64_t>();
    EXPECT_GT(bytes_read, 0) << "disk reads every miss";
    EXPECT_EQ(bytes_read % 4096, 0) << "O_DIRECT reads whole aligned blocks";
    EXPECT_EQ(j["bytes_written"].get<int64_t>(), 0) << "node features are read-only";
    // Reads issued: at most one per missed row (coalescing only merges),
    // each moving whole 4 KiB blocks.
    // Rows read: at least the misses (page companions come on top).
    const int64_t reads = j["reads_issued"].get<int64_t>(), rows_read = j["rows_read"].get<int64_t>();
    EXPECT_GT(reads, 0);
    EXPECT_GE(rows_read, j["cache_misses"].get<int64_t>());
    EXPECT_LE(reads, rows_read);
    EXPECT_GE(bytes_read, reads * 4096);
    EXPECT_DOUBLE_EQ(j["rows_per_read"].get<double>(), static_cast<double>(rows_read) / static_cast<double>(reads));
    ASSERT_TRUE(j["stages"].is_object());
    std::set<std::string> seen;
    for (auto it = j["stages"].begin(); it != j["stages"].end(); ++it) {
      seen.insert(it.key());
      EXPECT_GE(it.value()["busy"].get<double>(), 0.0) << it.key();
      EXPECT_GE(it.value()["wait"].get<double>(), 0.0) << it.key();
    }
    EXPECT_EQ(seen, stages);
    EXPECT_EQ(stages.count(j["bottleneck"].get<std::string>()), 1u) << j["bottleneck"];
  }
  // The summary's history has the same counters as the file.
  ASSERT_EQ(s.history.size(), 3u);
  EXPECT_EQ(s.history[0].bytes_read, lines[0]["bytes_read"].get<int64_t>());
  EXPECT_EQ(s.history[1].reads_issued, lines[1]["reads_issued"].get<int64_t>());
  EXPECT_EQ(s.history[2].cache_hits, lines[2]["cache_hits"].get<int64_t>());
}

TEST_F(PipelineMetricsTest, CountersFollowTheCache) {
  // No cache: every requested row is a miss and read each epoch.
  TrainOptions o = Options();
  o.feature_store = "memory";
  o.cache_size = 0;
  for (const EpochMetrics& m : TrainHistory(o)) {
    EXPECT_EQ(m.cache_hits, 0);
    EXPECT_EQ(m.cache_misses, m.rows_requested);
    EXPECT_GT(m.bytes_read, 0);
  }
  // A cache holding every row: after the first epoch nothing is read again.
  for (const char* policy : {"lookahead", "lru", "static"}) {
    o.feature_store = "disk";
    o.cache_policy = policy;
    o.cache_size = kPipelineFeatureBytes;
    const std::vector<EpochMetrics> h = TrainHistory(o);
    ASSERT_EQ(h.size(), 3u);
    EXPECT_GT(h[0].bytes_read, 0) << policy << ": the first epoch fills the cache";
    for (size_t e = 1; e < h.size(); ++e) {
      EXPECT_EQ(h[e].bytes_read, 0) << policy << ", epoch " << e + 1;
      EXPECT_EQ(h[e].cache_misses, 0) << policy << ", epoch " << e + 1;
      EXPECT_EQ(h[e].cache_hits, h[e].rows_requested) << policy << ", epoch " << e + 1;
    }
  }
}

// Page companions (64-byte rows, 64 to a 4 KiB page): the same losses bit
// for bit, and fewer misses for about as many reads.
TEST_F(PipelineMetricsTest, PageCompanionsMissLessForTheSameLosses) {
  TrainOptions o = Options();
  o.feature_store = "disk";
  o.cache_size = kPipelineFeatureBytes / 4;
  o.page_companions = "off";
  const std::vector<EpochMetrics> off = TrainHistory(o);
  o.page_companions = "on";
  const std::vector<EpochMetrics> on = TrainHistory(o);
  ASSERT_EQ(off.size(), 3u);
  ASSERT_EQ(on.size(), 3u);
  int64_t reads_off = 0, reads_on = 0, misses_off = 0, misses_on = 0;
  for (size_t e = 0; e < on.size(); ++e) {
    EXPECT_EQ(on[e].loss, off[e].loss) << "epoch " << e + 1;
    EXPECT_EQ(on[e].train_acc, off[e].train_acc) << "epoch " << e + 1;
    EXPECT_EQ(on[e].rows_requested, off[e].rows_requested);
    reads_off += off[e].reads_issued;
    reads_on += on[e].reads_issued;
    misses_off += off[e].cache_misses;
    misses_on += on[e].cache_misses;
  }
  // The whole file is 32 pages, so a batch's misses already coalesce into
  // one or two reads; what companions change is that rows a later batch
  // needs arrive with them: fewer misses for no more reads.
  std::printf("reads %lld -> %lld, misses %lld -> %lld\n", static_cast<long long>(reads_off),
              static_cast<long long>(reads_on), static_cast<long long>(misses_off), static_cast<long long>(misses_on));
  EXPECT_GT(reads_off, 0);
  EXPECT_LE(reads_on, reads_off + reads_off / 20);
  EXPECT_LT(misses_on, misses_off);
  o.page_companions = "sometimes";
  TrainSummary s;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "page_companions: 'sometimes' is not one of on, off");
}

TEST_F(PipelineMetricsTest, StagesAreReportedToObservers) {
  TrainOptions o = Options();
  o.epochs = 1;
  TrainCallbacks cb;
  int calls = 0;
  cb.on_stages = [&](const std::vector<std::pair<std::string, StageSeconds>>& stages) {
    ++calls;
    EXPECT_EQ(stages.size(), 6u);
    EXPECT_EQ(stages.front().first, "sample");
    EXPECT_EQ(stages.back().first, "write_back");
  };
  TrainSummary s;
  ASSERT_OK(Train(o, cb, &s));
  EXPECT_EQ(calls, 32);  // once per batch
  ASSERT_EQ(s.history.size(), 1u);
  EXPECT_EQ(s.history[0].stages.size(), 6u);
  EXPECT_FALSE(s.history[0].bottleneck.empty());
}

}  // namespace
}  // namespace foresight::trainer
