// The pipeline's row paths (feature_pipeline.h): the direct gather from a
// memory or mmap store's rows is chosen exactly when there is no cache, and
// it hands compute the same batches, bit for bit, with the same counters,
// as the cache planner path; training through it gives the same losses and
// accuracies for any thread count.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "foresight/core/dtype.h"
#include "foresight/core/thread_pool.h"
#include "foresight/kernels/keyed_dropout.h"
#include "foresight/storage/row_store.h"
#include "foresight/trainer/trainer.h"
#include "pipeline/feature_pipeline.h"
#include "pipeline_config_util.h"
#include "pipeline_test_util.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

using foresight::testing::ExpectSameResults;
using foresight::testing::kPipelineRowBytes;
using foresight::testing::TrainHistory;
using internal::ChooseRowPath;
using internal::PipelineConfig;
using internal::RowPath;
using foresight::testing::Delivered;
using foresight::testing::ExpectSameIo;
using foresight::testing::RunPipeline;
using foresight::testing::SameBytes;

TEST(RowPathChoiceTest, DirectOnlyForRowsInMemoryWithoutACache) {
  const Tensor rows = Tensor::Zeros({10, 4}, DType::kF32);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<storage::RowStore> store, storage::MemoryRowStore(rows, false));
  PipelineConfig c;
  c.store = store.get();
  c.host_rows = rows;
  c.cache.row_bytes = 16;
  c.cache.capacity_bytes = 0;
  internal::RowPathChoice choice = ChooseRowPath(c);
  EXPECT_EQ(choice.path, RowPath::kDirect);
  EXPECT_EQ(choice.reason,
            "direct gather from the memory store's rows in memory (no cache): no planner, one copy into x");
  c.cache.capacity_bytes = 15;  // less than a row: still no slot
  EXPECT_EQ(ChooseRowPath(c).path, RowPath::kDirect);

  c.cache.capacity_bytes = 32;
  choice = ChooseRowPath(c);
  EXPECT_EQ(choice.path, RowPath::kCached);
  EXPECT_EQ(choice.reason, "cache planner: 2-slot lookahead cache");
  c.cache.capacity_bytes = -1;  // the planner rejects it
  EXPECT_EQ(ChooseRowPath(c).path, RowPath::kCached);
  c.cache.capacity_bytes = 0;

  c.cache.writable = true;
  EXPECT_EQ(ChooseRowPath(c).reason, "cache planner: changed rows are written back through it");
  c.cache.writable = false;
  c.force_cache_planner = true;
  EXPECT_EQ(ChooseRowPath(c).reason, "cache planner: forced (direct gather disabled)");
  c.force_cache_planner = false;
  c.host_rows = Tensor();
  choice = ChooseRowPath(c);
  EXPECT_EQ(choice.path, RowPath::kCached);
  EXPECT_EQ(choice.reason, "cache planner: the memory store's rows are reached only by I/O");
}

constexpr int kEpochs = 2;

// f16 copy of f32 rows (the pipeline widens them back exactly).
Tensor ToHalf(const Tensor& f32) {
  Tensor h = Tensor::Empty(f32.shape(), DType::kF16);
  const float* src = f32.data<float>();
  uint16_t* dst = static_cast<uint16_t*>(h.raw_data());
  for (int64_t i = 0; i < f32.numel(); ++i) dst[i] = FloatToHalf(src[i]);
  return h;
}

using RowPathTest = foresight::testing::PipelineSuite;

TEST_F(RowPathTest, DirectAndPlannerPathsDeliverTheSameBatchesAndCounters) {
  ASSERT_OK_AND_ASSIGN(foresight::testing::PipelineInputs in, foresight::testing::OpenPipelineInputs(DataDir()));
  const Tensor& f32_rows = in.dataset->features();
  for (DType dtype : {DType::kF32, DType::kF16}) {
    const Tensor rows = dtype == DType::kF32 ? f32_rows : ToHalf(f32_rows);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<storage::RowStore> store, storage::MemoryRowStore(rows, false));
    std::vector<Delivered> runs;
    for (int threads : {1, 2}) {
      for (bool force : {false, true}) {
        ThreadPool pool(threads);
        PipelineConfig c = foresight::testing::BasicPipelineConfig(in, store.get(), &pool, kEpochs);
        c.host_rows = rows;
        c.force_cache_planner = force;
        runs.push_back(RunPipeline(c, force ? RowPath::kCached : RowPath::kDirect));
      }
    }
    const Delivered& direct = runs[0];
    ASSERT_EQ(direct.x.size(), static_cast<size_t>(kEpochs * in.order->num_batches()));
    for (size_t r = 1; r < runs.size(); ++r) {
      const std::string what = std::string(DTypeName(dtype)) + ", run " + std::to_string(r) +
                               (r % 2 == 1 ? " (planner)" : " (direct)") + (r >= 2 ? ", 2 threads" : ", 1 thread");
      ASSERT_EQ(runs[r].x.size(), direct.x.size()) << what;
      for (size_t i = 0; i < direct.x.size(); ++i) {
        EXPECT_TRUE(SameBytes(direct.x[i], runs[r].x[i])) << what << ", batch " << i;
        EXPECT_TRUE(SameBytes(direct.labels[i], runs[r].labels[i])) << what << ", batch " << i;
        ExpectSameIo(direct.io[i], runs[r].io[i], what + ", batch " + std::to_string(i));
      }
      for (int e = 0; e < kEpochs; ++e) {
        ExpectSameIo(direct.epochs[e].io, runs[r].epochs[e].io, what + ", epoch " + std::to_string(e));
      }
    }
    // x holds the store's rows, widened to f32; the counters are those of a
    // store read of every input row.
    const int64_t width = rows.size(1);
    for (size_t i = 0; i < direct.x.size(); ++i) {
      const int64_t* ids = direct.inputs[i].data<int64_t>();
      const float* x = direct.x[i].data<float>();
      int64_t wrong = 0;
      for (int64_t r = 0; r < direct.inputs[i].numel(); ++r) {
        for (int64_t k = 0; k < width; ++k) {
          const int64_t at = ids[r] * width + k;
          const float want = dtype == DType::kF32 ? rows.data<float>()[at]
                                                  : HalfToFloat(static_cast<const uint16_t*>(rows.raw_data())[at]);
          if (x[r * width + k] != want) ++wrong;
        }
      }
      EXPECT_EQ(wrong, 0) << DTypeName(dtype) << ", batch " << i;
      const internal::BatchIo& io = direct.io[i];
      EXPECT_EQ(io.rows_requested, direct.x[i].size(0));
      EXPECT_EQ(io.hits, 0);
      EXPECT_EQ(io.misses, io.rows_requested);
      EXPECT_EQ(io.bytes_read, io.rows_requested * store->row_bytes());
      EXPECT_EQ(io.bytes_written, 0);
      EXPECT_EQ(direct.x[i].dtype(), DType::kF32);
    }
    // The direct path runs no plan or assemble stage.
    for (const internal::EpochAccount& a : direct.epochs) {
      for (internal::Stage s : {internal::Stage::kPlan, internal::Stage::kAssemble}) {
        EXPECT_EQ(a.stages[static_cast<int>(s)].busy, 0.0) << internal::StageName(s);
        EXPECT_EQ(a.stages[static_cast<int>(s)].wait, 0.0) << internal::StageName(s);
      }
    }
  }
}

// With the model's input dropout in the config, the direct path's x is the
// planner path's x dropped out (DropoutRows keyed by the input nodes, with
// the batch's key), and says so; the planner path leaves it to the step.
TEST_F(RowPathTest, DirectPathDropsTheInputWithTheBatchsKey) {
  ASSERT_OK_AND_ASSIGN(foresight::testing::PipelineInputs in, foresight::testing::OpenPipelineInputs(DataDir()));
  const Tensor& rows = in.dataset->features();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<storage::RowStore> store, storage::MemoryRowStore(rows, false));
  const auto key_of = [](int64_t epoch, int64_t index) {
    return RngKey::FromSeed(9).Fold(static_cast<uint64_t>(epoch)).Fold(static_cast<uint64_t>(index));
  };
  std::vector<Delivered> runs;
  for (bool force : {false, true}) {
    ThreadPool pool(2);
    PipelineConfig c = foresight::testing::BasicPipelineConfig(in, store.get(), &pool, kEpochs);
    c.host_rows = rows;
    c.force_cache_planner = force;
    c.input_dropout = 0.3f;
    c.input_dropout_key = key_of;
    runs.push_back(RunPipeline(c, force ? RowPath::kCached : RowPath::kDirect));
  }
  const Delivered &direct = runs[0], &planner = runs[1];
  ASSERT_EQ(direct.x.size(), static_cast<size_t>(kEpochs * in.order->num_batches()));
  ASSERT_EQ(planner.x.size(), direct.x.size());
  int64_t zeros = 0;
  for (size_t i = 0; i < direct.x.size(); ++i) {
    const int64_t epoch = static_cast<int64_t>(i) / in.order->num_batches();
    const int64_t index = static_cast<int64_t>(i) % in.order->num_batches();
    ASSERT_TRUE(direct.x_dropout_keys[i].has_value()) << i;
    EXPECT_EQ(direct.x_dropout_keys[i]->key, key_of(epoch, index).key) << i;
    EXPECT_FALSE(planner.x_dropout_keys[i].has_value()) << i;
    Tensor want = Tensor::Empty(planner.x[i].shape(), DType::kF32);
    ASSERT_OK(kernels::DropoutRows(CpuContext().WithRng(key_of(epoch, index)), 0.3f, planner.x[i],
                                   planner.inputs[i], &want, nullptr));
    EXPECT_TRUE(SameBytes(want, direct.x[i])) << "batch " << i;
    for (int64_t k = 0; k < want.numel(); ++k) zeros += want.data<float>()[k] == 0.0f;
  }
  EXPECT_GT(zeros, 0);  // it did drop
}

TEST_F(RowPathTest, DirectPathTrainsBitForBitLikeThePlannerPath) {
  // Memory store, no cache: the direct path, 2 threads.
  TrainOptions o = Options();
  o.feature_store = "memory";
  o.cache_size = 0;
  const std::vector<EpochMetrics> direct = TrainHistory(o);
  ASSERT_EQ(direct.size(), 3u);
  for (const EpochMetrics& m : direct) {
    EXPECT_EQ(m.cache_hits, 0);
    EXPECT_EQ(m.cache_misses, m.rows_requested);
    EXPECT_EQ(m.bytes_read, m.rows_requested * kPipelineRowBytes);
  }
  o.threads = 1;
  ExpectSameResults(direct, TrainHistory(o), "memory, direct, 1 thread");
  o.feature_store = "mmap";
  ExpectSameResults(direct, TrainHistory(o), "mmap, direct, 1 thread");
  // One row of cache: the planner path, every other row read around it.
  o.feature_store = "memory";
  o.cache_size = kPipelineRowBytes;
  for (int threads : {1, 2}) {
    o.threads = threads;
    const std::vector<EpochMetrics> planned = TrainHistory(o);
    const std::string what = "memory, 1-row cache, " + std::to_string(threads) + " thread(s)";
    ExpectSameResults(direct, planned, what);
    ASSERT_EQ(planned.size(), direct.size());
    for (size_t e = 0; e < direct.size(); ++e) {
      EXPECT_EQ(planned[e].rows_requested, direct[e].rows_requested) << what << ", epoch " << e + 1;
      EXPECT_EQ(planned[e].cache_hits + planned[e].cache_misses, direct[e].cache_misses) << what;
    }
  }
}

}  // namespace
}  // namespace foresight::trainer
