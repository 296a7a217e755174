// An error in any pipeline stage stops training cleanly: Train returns it,
// naming the stage, and nothing hangs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "foresight/core/thread_pool.h"
#include "foresight/storage/row_store.h"
#include "foresight/trainer/trainer.h"
#include "pipeline/feature_pipeline.h"
#include "pipeline_config_util.h"
#include "pipeline_test_util.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

using foresight::testing::kPipelineFeatureBytes;

using PipelineFailureTest = foresight::testing::FreshPipelineDatasetTest;

// The features file loses its second half while training runs: the read
// stage's next read of those rows fails with the store's error.
TEST_F(PipelineFailureTest, FileTruncatedDuringTrainingStopsTheReadStage) {
  const std::string features = FeaturesFile();
  TrainOptions o = Options();
  o.feature_store = "disk";
  o.cache_size = 0;
  TrainCallbacks cb;
  int batches = 0;
  cb.on_batch = [&](int, int64_t, int64_t, double) {
    if (++batches == 1) {
      ASSERT_EQ(truncate(features.c_str(), kPipelineFeatureBytes / 2), 0);
    }
  };
  TrainSummary s;
  const Status st = Train(o, cb, &s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("pipeline stage 'read'"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("features.npy"), std::string::npos) << st.ToString();
  EXPECT_LT(batches, 32 * 3);
}

// A store whose reads fail after `ok_reads` successful ones.
class FailingStore : public storage::RowStore {
 public:
  FailingStore(std::unique_ptr<storage::RowStore> inner, int ok_reads)
      : RowStore(inner->dtype(), inner->row_width()), inner_(std::move(inner)), ok_reads_(ok_reads) {}
  int64_t num_rows() const override { return inner_->num_rows(); }
  bool writable() const override { return false; }
  std::string backend() const override { return "disk (test)"; }
  StatusOr<storage::IoTicket> SubmitRead(const std::vector<storage::RowRequest>& reqs, uint8_t* absent) override {
    if (reads_++ >= ok_reads_) return IoError("injected read failure");
    return inner_->SubmitRead(reqs, absent);
  }
  StatusOr<storage::IoTicket> SubmitWrite(const std::vector<storage::RowRequest>& reqs) override {
    return inner_->SubmitWrite(reqs);
  }
  Status Wait(storage::IoTicket t) override { return inner_->Wait(t); }
  Status Flush() override { return inner_->Flush(); }
  storage::RowStoreStats stats() const override { return inner_->stats(); }
  void ResetStats() override { inner_->ResetStats(); }

 private:
  std::unique_ptr<storage::RowStore> inner_;
  int ok_reads_;
  std::atomic<int> reads_{0};
};

TEST_F(PipelineFailureTest, StoreErrorSurfacesFromNextNamingTheStage) {
  ASSERT_OK_AND_ASSIGN(foresight::testing::PipelineInputs in,
                       foresight::testing::OpenPipelineInputs(DataDir()));
  storage::RowStoreOptions so;
  so.kind = storage::RowStoreKind::kMemory;
  so.path = FeaturesFile();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<storage::RowStore> inner, storage::OpenRowStore(so));
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    FailingStore store(std::move(inner), /*ok_reads=*/5);
    internal::PipelineConfig c = foresight::testing::BasicPipelineConfig(in, &store, &pool, /*epochs=*/3);
    c.cache.capacity_bytes = kPipelineFeatureBytes / 20;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<internal::FeaturePipeline> p, internal::FeaturePipeline::Start(c));
    int delivered = 0;
    const Status st = foresight::testing::DrainUntilError(p.get(), &delivered);
    // Batches already assembled when the read failed are dropped with it.
    EXPECT_LE(delivered, 5) << threads << " threads";
    EXPECT_EQ(st.code(), StatusCode::kIoError);
    EXPECT_NE(st.message().find("pipeline stage 'read': injected read failure"), std::string::npos) << st.ToString();
    EXPECT_FALSE(p->WaitReleased(c.end_seq - 1).ok());
    p.reset();  // joins every stage: no hang
    ASSERT_OK_AND_ASSIGN(inner, storage::OpenRowStore(so));
  }
}

// Stopping a pipeline mid-stream (early stopping, an error in compute)
// cancels every stage without waiting for the stream's end.
TEST_F(PipelineFailureTest, DestroyingARunningPipelineDoesNotHang) {
  TrainOptions o = Options();
  o.epochs = 50;
  o.patience = 1;  // stops early, with batches of later epochs in flight
  o.lookahead = 16;
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  EXPECT_TRUE(s.stopped_early || s.epochs_completed == 50);
}

}  // namespace
}  // namespace foresight::trainer
