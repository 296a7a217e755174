// The compute thread helps the pipeline while it waits for a batch
// (PipelineConfig::compute_helps, ThreadPool::HelpUntil): it runs stage
// steps and chunks of their loops. Which thread runs a step must not change
// a batch, and helping must end when a batch, the end or an error comes.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "foresight/core/thread_pool.h"
#include "foresight/storage/row_store.h"
#include "pipeline/feature_pipeline.h"
#include "pipeline_config_util.h"
#include "pipeline_test_util.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

using foresight::testing::Delivered;
using foresight::testing::ExpectSameIo;
using foresight::testing::kPipelineFeatureBytes;
using foresight::testing::RunPipeline;
using foresight::testing::SameBytes;
using internal::PipelineConfig;
using internal::RowPath;

using PipelineHelpTest = foresight::testing::PipelineSuite;

void ExpectSameBatches(const Delivered& want, const Delivered& got, const std::string& what) {
  ASSERT_EQ(got.x.size(), want.x.size()) << what;
  for (size_t i = 0; i < want.x.size(); ++i) {
    EXPECT_TRUE(SameBytes(want.inputs[i], got.inputs[i])) << what << ", batch " << i;
    EXPECT_TRUE(SameBytes(want.x[i], got.x[i])) << what << ", batch " << i;
    EXPECT_TRUE(SameBytes(want.labels[i], got.labels[i])) << what << ", batch " << i;
    EXPECT_EQ(want.x_dropout_keys[i].has_value(), got.x_dropout_keys[i].has_value()) << what << ", batch " << i;
    if (want.x_dropout_keys[i].has_value() && got.x_dropout_keys[i].has_value()) {
      EXPECT_EQ(want.x_dropout_keys[i]->key, got.x_dropout_keys[i]->key) << what << ", batch " << i;
    }
    ExpectSameIo(want.io[i], got.io[i], what + ", batch " + std::to_string(i));
  }
}

// On both row paths (the direct gather with the input dropout; the
// planner with a cache), a compute stage that helps gets the batches of
// one that only waits, bit for bit: with a compute step of no time (it
// waits for nearly every batch, so it helps), and with a slow one in the
// first epoch (the queues fill, then drain). Only the helping runs help.
TEST_F(PipelineHelpTest, AHelpingComputeStageGetsTheSameBatches) {
  ASSERT_OK_AND_ASSIGN(foresight::testing::PipelineInputs in, foresight::testing::OpenPipelineInputs(DataDir()));
  const Tensor& rows = in.dataset->features();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<storage::RowStore> store, storage::MemoryRowStore(rows, false));
  const int64_t per_epoch = in.order->num_batches();
  for (bool direct : {true, false}) {
    for (bool slow_first_epoch : {false, true}) {
      std::vector<Delivered> runs;
      for (bool helps : {false, true}) {
        ThreadPool pool(2);
        PipelineConfig c = foresight::testing::BasicPipelineConfig(in, store.get(), &pool, /*epochs=*/2);
        c.host_rows = rows;
        c.compute_helps = helps;
        if (direct) {
          c.input_dropout = 0.3f;
          c.input_dropout_key = [](int64_t epoch, int64_t index) {
            return RngKey::FromSeed(5).Fold(static_cast<uint64_t>(epoch)).Fold(static_cast<uint64_t>(index));
          };
        } else {
          c.cache.capacity_bytes = kPipelineFeatureBytes / 20;
        }
        runs.push_back(RunPipeline(c, direct ? RowPath::kDirect : RowPath::kCached, [&](int64_t seq) {
          if (slow_first_epoch && seq < per_epoch) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }));
        const int64_t helped = pool.helped_tasks() + pool.helped_chunks();
        const std::string what = std::string(direct ? "direct" : "planner") + (slow_first_epoch ? ", slow" : "") +
                                 (helps ? ", helping" : ", waiting");
        if (helps) {
          EXPECT_GT(helped, 0) << what << ": the compute thread never ran pipeline work";
        } else {
          EXPECT_EQ(helped, 0) << what;
        }
      }
      ASSERT_EQ(runs[0].x.size(), static_cast<size_t>(2 * per_epoch));
      ExpectSameBatches(runs[0], runs[1],
                        std::string(direct ? "direct" : "planner") + (slow_first_epoch ? ", slow first epoch" : ""));
    }
  }
}

// A stage fails while the compute stage helps, with nothing queued for it
// (the sample stage sleeps before failing, so Next() has run out of work
// and sleeps in HelpUntil): the cancellation wakes it, and Next() returns
// the stage's error instead of hanging. Then the pipeline shuts down.
TEST_F(PipelineHelpTest, AStageErrorEndsAHelpingNext) {
  ASSERT_OK_AND_ASSIGN(foresight::testing::PipelineInputs in, foresight::testing::OpenPipelineInputs(DataDir()));
  const Tensor& rows = in.dataset->features();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<storage::RowStore> store, storage::MemoryRowStore(rows, false));
  ThreadPool pool(2);
  PipelineConfig c = foresight::testing::BasicPipelineConfig(in, store.get(), &pool, /*epochs=*/1);
  c.host_rows = rows;
  c.on_sampled = [](int64_t seq, const Tensor&) -> Status {
    if (seq < 3) return Status::OK();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return Internal("injected sample failure at batch " + std::to_string(seq));
  };
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<internal::FeaturePipeline> p, internal::FeaturePipeline::Start(c));
  int delivered = 0;
  const Status st = foresight::testing::DrainUntilError(p.get(), &delivered);
  EXPECT_LE(delivered, 3);
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st.ToString();
  EXPECT_NE(st.message().find("injected sample failure at batch 3"), std::string::npos) << st.ToString();
  p.reset();  // joins every stage: no hang
}

}  // namespace
}  // namespace foresight::trainer
