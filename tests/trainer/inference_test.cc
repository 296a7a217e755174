// Evaluate and Export on checkpoints written by Train.
#include "foresight/trainer/inference.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "foresight/storage/dataset.h"
#include "foresight/storage/npy.h"
#include "foresight/trainer/trainer.h"
#include "synthetic_dataset.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

using foresight::testing::SmallOptions;
using foresight::testing::TempDir;

class InferenceTest : public ::testing::TestWithParam<std::tuple<std::string, bool>> {
 protected:
  void SetUp() override {
    foresight::testing::SyntheticSpec spec;
    spec.num_nodes = 200;
    spec.original_ids = true;
    ASSERT_OK(foresight::testing::WriteSyntheticDataset(dir_.File("data"), spec));
    TrainOptions o = SmallOptions(dir_.File("data"), std::get<0>(GetParam()), std::get<1>(GetParam()));
    o.epochs = 6;
    o.checkpoint_dir = dir_.File("ckpt");
    ASSERT_OK(Train(o, &summary_));
    options_.dataset = o.dataset;
    options_.checkpoint_dir = o.checkpoint_dir;
    options_.eval_batch_size = o.eval_batch_size;
    options_.threads = 2;
  }
  TempDir dir_;
  TrainSummary summary_;
  InferenceOptions options_;
};

TEST_P(InferenceTest, EvaluateReproducesTheReportedAccuracies) {
  EvaluationResult best;
  ASSERT_OK(Evaluate(options_, &best));
  EXPECT_EQ(best.epoch, summary_.best_epoch);
  EXPECT_EQ(best.val_acc, summary_.best_val_acc);
  EXPECT_EQ(best.test_acc, summary_.test_acc);
  EXPECT_EQ(best.train_count, 100);
  EXPECT_EQ(best.val_count, 50);
  EXPECT_EQ(best.test_count, 50);

  options_.use_best = false;
  EvaluationResult last;
  ASSERT_OK(Evaluate(options_, &last));
  EXPECT_EQ(last.epoch, 6);
  EXPECT_EQ(last.val_acc, summary_.history.back().val_acc);
  EXPECT_EQ(last.test_acc, summary_.history.back().test_acc);
}

TEST_P(InferenceTest, ExportWritesEmbeddingsPredictionsAndIds) {
  options_.write_logits = true;
  options_.write_probabilities = true;
  const std::string out = dir_.File("export");
  ASSERT_OK(Export(options_, out));
  ASSERT_OK_AND_ASSIGN(auto dataset, storage::Dataset::Open(dir_.File("data")));
  ASSERT_OK_AND_ASSIGN(Tensor emb, storage::LoadNpy(out + "/embeddings.npy"));
  ASSERT_OK_AND_ASSIGN(Tensor pred, storage::LoadNpy(out + "/predictions.npy"));
  ASSERT_OK_AND_ASSIGN(Tensor logits, storage::LoadNpy(out + "/logits.npy"));
  ASSERT_OK_AND_ASSIGN(Tensor probs, storage::LoadNpy(out + "/probabilities.npy"));
  ASSERT_OK_AND_ASSIGN(Tensor ids, storage::LoadNpy(out + "/original_ids.npy"));
  const int64_t n = 200;
  const bool gat = std::get<0>(GetParam()) == "gat";
  EXPECT_EQ(emb.dtype(), DType::kF32);
  EXPECT_EQ(emb.shape(), (Shape{n, gat ? 16 * 2 : 16}));
  EXPECT_EQ(pred.dtype(), DType::kI64);
  EXPECT_EQ(pred.shape(), (Shape{n}));
  EXPECT_EQ(logits.shape(), (Shape{n, 3}));
  EXPECT_EQ(ids.dtype(), DType::kI64);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(ids.data<int64_t>()[i], 1000 + 7 * i);

  // Predictions are the argmax of the logits, probabilities their softmax,
  // and their accuracy on the test ids is the best epoch's test accuracy.
  const float* l = logits.data<float>();
  const float* p = probs.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    double sum = 0;
    for (int64_t k = 0; k < 3; ++k) {
      if (l[i * 3 + k] > l[i * 3 + best]) best = k;
      sum += p[i * 3 + k];
    }
    EXPECT_EQ(pred.data<int64_t>()[i], best) << "row " << i;
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << i;
  }
  const Tensor& test = dataset->test_ids();
  const int64_t* labels = dataset->labels().data<int64_t>();
  int64_t correct = 0;
  for (int64_t i = 0; i < test.numel(); ++i) {
    const int64_t v = test.data<int64_t>()[i];
    correct += pred.data<int64_t>()[v] == labels[v];
  }
  EXPECT_EQ(static_cast<double>(correct) / test.numel(), summary_.test_acc);
  // Embeddings are post-activation (ReLU for sage/gcn): never negative.
  if (!gat) {
    for (int64_t i = 0; i < emb.numel(); ++i) ASSERT_GE(emb.data<float>()[i], 0.0f);
  }
}

TEST_P(InferenceTest, RejectsAMismatchedDataset) {
  foresight::testing::SyntheticSpec spec;
  spec.num_nodes = 100;
  ASSERT_OK(foresight::testing::WriteSyntheticDataset(dir_.File("other"), spec));
  options_.dataset = dir_.File("other");
  EvaluationResult r;
  EXPECT_ERROR_CONTAINS(Evaluate(options_, &r), "checkpoint", "200 nodes", "100");
  options_.dataset = dir_.File("data");
  options_.checkpoint_dir = dir_.File("nowhere");
  EXPECT_ERROR_CONTAINS(Evaluate(options_, &r), "no checkpoint in");
}

INSTANTIATE_TEST_SUITE_P(Models, InferenceTest,
                         ::testing::Values(std::make_tuple(std::string("sage"), false),
                                           std::make_tuple(std::string("gat"), false),
                                           std::make_tuple(std::string("gcn"), false),
                                           std::make_tuple(std::string("sage"), true)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + (std::get<1>(info.param) ? "_full" : "_minibatch");
                         });

}  // namespace
}  // namespace foresight::trainer
