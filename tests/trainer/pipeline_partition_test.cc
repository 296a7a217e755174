// Partition order and resident sampling on a partitioned dataset
// (graph::PartitionDataset): both train, and resident sampling reads fewer
// feature bytes than full neighbourhoods at the same cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/graph/partition.h"
#include "foresight/storage/dataset.h"
#include "foresight/trainer/trainer.h"
#include "pipeline_test_util.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

using foresight::testing::kPipelineFeatureBytes;
using foresight::testing::PipelineOptions;
using foresight::testing::TrainHistory;

// "data" (unpartitioned) and "parted", its copy cut in 8 METIS partitions.
class PipelinePartitionTest : public foresight::testing::PipelineSuite {
 protected:
  static void SetUpTestSuite() {
    PipelineSuite::SetUpTestSuite();
    ASSERT_OK(foresight::testing::WritePipelineDataset(Parted()));
    graph::PartitionOptions po;
    po.parts = 8;
    po.method = "metis";
    po.seed = 1;
    auto report = graph::PartitionDataset(CpuContext(1), Parted(), po);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
  }
  static std::string Parted() { return dir().File("parted"); }

  // The partition order with one resident partition on the memory store
  // (the results every disk run must give); *o is left set for the disk
  // store behind a cache of a quarter of the features.
  static std::vector<EpochMetrics> MemoryReferenceThenDisk(TrainOptions* o) {
    *o = PipelineOptions(Parted());
    o->order = "partition";
    o->resident_partitions = 1;
    o->feature_store = "memory";
    o->cache_size = 0;
    std::vector<EpochMetrics> reference = TrainHistory(*o);
    o->feature_store = "disk";
    o->cache_size = kPipelineFeatureBytes / 4;
    return reference;
  }
};

int64_t TotalBytesRead(const std::vector<EpochMetrics>& h) {
  int64_t b = 0;
  for (const EpochMetrics& m : h) b += m.bytes_read;
  return b;
}

TEST_F(PipelinePartitionTest, PartitionOrderTrainsAndResidentSamplingReadsLess) {
  TrainOptions o = PipelineOptions(Parted());
  o.feature_store = "disk";
  o.cache_size = kPipelineFeatureBytes / 10;
  o.order = "partition";
  o.resident_partitions = 1;
  const std::vector<EpochMetrics> full = TrainHistory(o);
  o.sampling = "resident";
  const std::vector<EpochMetrics> resident = TrainHistory(o);
  ASSERT_EQ(full.size(), 3u);
  ASSERT_EQ(resident.size(), 3u);
  for (size_t e = 0; e < 3; ++e) {
    EXPECT_EQ(full[e].seeds, resident[e].seeds);  // the same seeds, fewer neighbours
    EXPECT_LE(resident[e].rows_requested, full[e].rows_requested);
  }
  EXPECT_LT(full.back().loss, full.front().loss);
  EXPECT_LT(resident.back().loss, resident.front().loss);
  EXPECT_LT(TotalBytesRead(resident), TotalBytesRead(full));
  EXPECT_GT(resident.back().val_acc, 0.5);  // 3 classes: still learns
}

TEST_F(PipelinePartitionTest, PartitionOrderIsDeterministicAcrossStoresAndThreads) {
  TrainOptions o = PipelineOptions(Parted());
  o.order = "partition";
  o.sampling = "resident";
  o.resident_partitions = 2;
  o.feature_store = "memory";
  o.cache_size = 0;
  const std::vector<EpochMetrics> reference = TrainHistory(o);
  o.feature_store = "disk";
  o.cache_size = kPipelineFeatureBytes / 20;
  o.threads = 1;
  foresight::testing::ExpectSameResults(reference, TrainHistory(o), "resident, disk, 1 thread");
}

// resident_partitions 0 takes as many partitions as the cache holds (by the
// largest partition's rows): the very run of that explicit group.
TEST_F(PipelinePartitionTest, AutomaticGroupIsWhatTheCacheHolds) {
  auto dataset = storage::Dataset::Open(Parted());
  ASSERT_OK(dataset.status());
  const std::vector<int64_t>& offsets = (*dataset)->partition_offsets();
  ASSERT_EQ(offsets.size(), 9u);
  int64_t largest = 0;
  for (size_t p = 0; p + 1 < offsets.size(); ++p) largest = std::max(largest, offsets[p + 1] - offsets[p]);
  TrainOptions o = PipelineOptions(Parted());
  o.epochs = 2;
  o.order = "partition";
  o.sampling = "resident";
  o.feature_store = "disk";
  for (int group : {1, 3}) {
    o.cache_size = (group * largest + largest / 2) * foresight::testing::kPipelineRowBytes;
    o.resident_partitions = group;
    const std::vector<EpochMetrics> explicit_group = TrainHistory(o);
    o.resident_partitions = 0;
    foresight::testing::ExpectSameResults(explicit_group, TrainHistory(o),
                                          "automatic group of " + std::to_string(group));
    // Another group samples other neighbourhoods: the comparison can fail.
    o.resident_partitions = group + 1;
    const std::vector<EpochMetrics> other = TrainHistory(o);
    ASSERT_FALSE(other.empty());
    EXPECT_NE(other[0].rows_requested, explicit_group[0].rows_requested) << group;
  }
}

int64_t TotalReads(const std::vector<EpochMetrics>& h) {
  int64_t n = 0;
  for (const EpochMetrics& m : h) n += m.reads_issued;
  return n;
}

// Under the partition order a group's rows are contiguous in the file but
// each batch reads them sparsely. A companion span of several pages with a
// read gap brings the window's rows near each miss in one longer read: the
// run issues fewer reads, and trains exactly as the memory store does
// (also with the static tier ranked by edges from other partitions).
TEST_F(PipelinePartitionTest, CompanionSpanAndReadGapIssueFewerReadsWithTheSameResults) {
  TrainOptions o;
  const std::vector<EpochMetrics> reference = MemoryReferenceThenDisk(&o);
  // Session 13's reads: companions from the miss's page, no read gap.
  o.companion_span = 4 << 10;
  o.read_gap = 0;
  o.lookahead = 32;
  const std::vector<EpochMetrics> pages = TrainHistory(o);
  foresight::testing::ExpectSameResults(reference, pages, "disk, page companions");
  o.companion_span = 16 << 10;
  o.read_gap = 8 << 10;
  const std::vector<EpochMetrics> spans = TrainHistory(o);
  foresight::testing::ExpectSameResults(reference, spans, "disk, 16 KiB companion span, 8 KiB read gap");
  EXPECT_LT(TotalReads(spans), TotalReads(pages));
  int64_t rows_read = 0, rows_requested = 0;
  for (const EpochMetrics& m : spans) rows_read += m.rows_read, rows_requested += m.rows_requested;
  EXPECT_LE(rows_read, rows_requested);
  o.hot_fraction = 0.25f;
  o.hot_rank = "halo";
  foresight::testing::ExpectSameResults(reference, TrainHistory(o), "disk, spans, static tier of halo rows");
}

// With no read flags the disk store under the partition order reads as
// --companion-span 64K --read-gap 12K --lookahead 64 do
// (TrainOptions::PartitionDiskReads): the very reads of those flags, fewer
// than the page companions alone, and the memory store's results.
TEST_F(PipelinePartitionTest, TheDiskStoreUnderPartitionOrderDefaultsToWideReads) {
  TrainOptions o;
  const std::vector<EpochMetrics> reference = MemoryReferenceThenDisk(&o);
  ASSERT_EQ(o.lookahead, -1);  // auto, as a user who names none gets
  ASSERT_EQ(o.read_gap, -1);
  ASSERT_EQ(o.companion_span, -1);
  const std::vector<EpochMetrics> defaults = TrainHistory(o);
  foresight::testing::ExpectSameResults(reference, defaults, "disk, default reads");
  o.companion_span = 64 << 10;
  o.read_gap = 12 << 10;
  o.lookahead = 64;
  const std::vector<EpochMetrics> wide = TrainHistory(o);
  ASSERT_EQ(defaults.size(), wide.size());
  for (size_t e = 0; e < wide.size(); ++e) {
    EXPECT_EQ(defaults[e].reads_issued, wide[e].reads_issued) << "epoch " << e;
    EXPECT_EQ(defaults[e].bytes_read, wide[e].bytes_read) << "epoch " << e;
    EXPECT_EQ(defaults[e].cache_misses, wide[e].cache_misses) << "epoch " << e;
  }
  o.companion_span = 4 << 10;
  o.read_gap = 0;
  o.lookahead = 32;
  EXPECT_LT(TotalReads(defaults), TotalReads(TrainHistory(o)));
}

TEST_F(PipelinePartitionTest, PartitionOrderNeedsAPartitionedDataset) {
  TrainOptions o = Options();
  o.order = "partition";
  TrainSummary s;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "order: partition needs a partitioned dataset", "foresight partition",
                        DataDir());
}

}  // namespace
}  // namespace foresight::trainer
