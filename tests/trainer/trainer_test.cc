#include "foresight/trainer/trainer.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <tuple>

#include "synthetic_dataset.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

using foresight::testing::ReadMetricsWithoutTimings;
using foresight::testing::SmallOptions;
using foresight::testing::TempDir;

class TrainerTest : public ::testing::TestWithParam<std::tuple<std::string, bool>> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    foresight::testing::SyntheticSpec spec;
    // Large enough that the kernels split their loops into several chunks,
    // so two threads really share the work in the determinism test.
    spec.num_nodes = 1500;
    spec.feature_dim = 16;
    spec.feature_dtype = DType::kF16;  // exercises the f16 -> f32 gather
    const Status s = foresight::testing::WriteSyntheticDataset(dir_->File("data"), spec);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string Dataset() { return dir_->File("data"); }
  TrainOptions Options() const {
    return SmallOptions(Dataset(), std::get<0>(GetParam()), std::get<1>(GetParam()));
  }

  static TempDir* dir_;
};
TempDir* TrainerTest::dir_ = nullptr;

TEST_P(TrainerTest, LossFallsAndAccuracyBeatsChance) {
  TrainOptions o = Options();
  o.epochs = std::get<1>(GetParam()) ? 40 : 8;
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  ASSERT_EQ(s.history.size(), static_cast<size_t>(o.epochs));
  EXPECT_EQ(s.epochs_completed, o.epochs);
  EXPECT_LT(s.history.back().loss, 0.7 * s.history.front().loss);
  // 3 balanced classes: chance is about 1/3; the signal makes 0.8+ easy.
  EXPECT_GT(s.best_val_acc, 0.75);
  EXPECT_GT(s.test_acc, 0.7);
  EXPECT_GE(s.best_epoch, 1);
  EXPECT_LE(s.best_epoch, o.epochs);
  // The reported test accuracy is the one at the first best epoch.
  double best = -1;
  int first_best = 0;
  for (const EpochMetrics& m : s.history) {
    if (m.val_acc > best) {
      best = m.val_acc;
      first_best = m.epoch;
    }
  }
  EXPECT_EQ(s.best_epoch, first_best);
  EXPECT_EQ(s.test_acc, s.history[first_best - 1].test_acc);
  for (const EpochMetrics& m : s.history) {
    EXPECT_EQ(m.seeds, 750);  // every training id once per epoch
    EXPECT_GT(m.sampled_edges, 0);
  }
}

TEST_P(TrainerTest, MetricsIdenticalForOneAndTwoThreads) {
  TempDir out;
  TrainOptions o = Options();
  o.epochs = 3;
  o.batch_size = 256;
  o.metrics_file = out.File("t1.jsonl");
  TrainSummary s1, s2;
  ASSERT_OK(Train(o, &s1));
  o.threads = 2;
  o.metrics_file = out.File("t2.jsonl");
  ASSERT_OK(Train(o, &s2));
  const auto a = ReadMetricsWithoutTimings(out.File("t1.jsonl"));
  const auto b = ReadMetricsWithoutTimings(out.File("t2.jsonl"));
  ASSERT_EQ(a.size(), 4u);  // 3 epochs + final
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a.back().value("final", false));
  for (const char* key : {"epoch", "loss", "train_acc", "val_acc", "test_acc", "seeds", "sampled_edges"}) {
    EXPECT_TRUE(a[0].contains(key)) << key;
  }
  // A different seed gives a different trajectory (the comparison can fail).
  o.seed = 8;
  o.metrics_file = out.File("t3.jsonl");
  ASSERT_OK(Train(o, &s2));
  EXPECT_NE(a[0]["loss"], ReadMetricsWithoutTimings(out.File("t3.jsonl"))[0]["loss"]);
}

INSTANTIATE_TEST_SUITE_P(Models, TrainerTest,
                         ::testing::Combine(::testing::Values("sage", "gcn", "gat"), ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) + (std::get<1>(info.param) ? "_full" : "_minibatch");
                         });

class TrainerSingleTest : public foresight::testing::SyntheticDatasetTest<> {};

TEST_F(TrainerSingleTest, MetricsFileHasEveryKey) {
  TrainOptions o = SmallOptions(dir_.File("data"), "sage", false);
  o.epochs = 2;
  o.metrics_file = dir_.File("m.jsonl");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  std::istringstream in(foresight::testing::ReadFile(o.metrics_file));
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 3u);
  for (int e = 0; e < 2; ++e) {
    for (const char* key : {"epoch", "loss", "train_acc", "val_acc", "test_acc", "epoch_seconds",
                            "epoch_cpu_seconds", "seeds_per_second", "sampled_edges_per_second",
                            "sample_seconds", "gather_seconds", "forward_seconds", "backward_seconds",
                            "optimizer_seconds", "eval_seconds"}) {
      EXPECT_TRUE(lines[e].contains(key)) << key;
    }
    // Training did work: the process used CPU time over the epoch.
    EXPECT_GT(lines[e]["epoch_cpu_seconds"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(lines[e]["epoch_cpu_seconds"].get<double>(), s.history[e].epoch_cpu_seconds);
    EXPECT_EQ(lines[e]["epoch_minor_faults"].get<int64_t>(), s.history[e].epoch_minor_faults);
    EXPECT_GE(s.history[e].epoch_minor_faults, 0);
    EXPECT_EQ(lines[e]["epoch"], e + 1);
    EXPECT_DOUBLE_EQ(lines[e]["loss"].get<double>(), s.history[e].loss);
  }
  EXPECT_EQ(lines[2]["final"], true);
  EXPECT_EQ(lines[2]["best_epoch"], s.best_epoch);
  EXPECT_DOUBLE_EQ(lines[2]["val_acc"].get<double>(), s.best_val_acc);
  EXPECT_DOUBLE_EQ(lines[2]["test_acc"].get<double>(), s.test_acc);
}

TEST_F(TrainerSingleTest, CallbacksSeeEveryBatchAndEpoch) {
  TrainOptions o = SmallOptions(dir_.File("data"), "sage", false);
  o.epochs = 2;
  o.batch_size = 50;  // 120 training ids: 3 batches per epoch
  std::vector<std::tuple<int, int64_t, int64_t>> batches;
  std::vector<int> epochs;
  TrainCallbacks cb;
  cb.on_batch = [&](int epoch, int64_t batch, int64_t num_batches, double loss) {
    batches.emplace_back(epoch, batch, num_batches);
    EXPECT_GT(loss, 0.0);
  };
  cb.on_epoch = [&](const EpochMetrics& m) { epochs.push_back(m.epoch); };
  TrainSummary s;
  ASSERT_OK(Train(o, cb, &s));
  const std::vector<std::tuple<int, int64_t, int64_t>> expected = {
      {1, 0, 3}, {1, 1, 3}, {1, 2, 3}, {2, 0, 3}, {2, 1, 3}, {2, 2, 3}};
  EXPECT_EQ(batches, expected);
  EXPECT_EQ(epochs, (std::vector<int>{1, 2}));
}

TEST_F(TrainerSingleTest, EarlyStoppingWaitsPatienceEpochs) {
  TrainOptions o = SmallOptions(dir_.File("data"), "gcn", true);
  o.epochs = 50;
  o.lr = 1e-12f;  // nothing changes: the first epoch stays the best
  o.dropout = 0;
  o.patience = 3;
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  EXPECT_TRUE(s.stopped_early);
  EXPECT_EQ(s.best_epoch, 1);
  EXPECT_EQ(s.epochs_completed, 4);
  EXPECT_EQ(s.history.size(), 4u);
}

// --input-dropout: equal to --dropout it is the default run, bit for bit;
// 0 drops out between layers only (another trajectory); 1 or more is refused.
TEST_F(TrainerSingleTest, InputDropoutSetsTheFirstLayersDropoutApart) {
  for (const char* model : {"sage", "gcn"}) {
    TrainOptions o = SmallOptions(dir_.File("data"), model, false);
    o.epochs = 2;
    o.dropout = 0.3f;
    TrainSummary base, same, none;
    ASSERT_OK(Train(o, &base));
    o.input_dropout = 0.3f;
    ASSERT_OK(Train(o, &same));
    o.input_dropout = 0.0f;
    ASSERT_OK(Train(o, &none));
    for (int e = 0; e < 2; ++e) {
      EXPECT_EQ(base.history[e].loss, same.history[e].loss) << model << " epoch " << e + 1;
      EXPECT_NE(base.history[e].loss, none.history[e].loss) << model << " epoch " << e + 1;
    }
    o.input_dropout = 1.0f;
    TrainSummary s;
    EXPECT_ERROR_CONTAINS(Train(o, &s), "input_dropout", "below 1");
  }
  TrainOptions o = SmallOptions(dir_.File("data"), "sage", false);
  o.model = "dlrm";
  o.input_dropout = 0.0f;
  EXPECT_ERROR_CONTAINS(o.Validate(), "input_dropout", "--model dlrm has none");
}

TEST_F(TrainerSingleTest, ReportsBadDatasetAndOptions) {
  TrainOptions o = SmallOptions(dir_.File("missing"), "sage", false);
  TrainSummary s;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "missing");
  o = SmallOptions(dir_.File("data"), "sage", false);
  o.fanouts = {5};
  EXPECT_ERROR_CONTAINS(Train(o, &s), "fanouts: 1 given (5) but layers is 2");
}

}  // namespace
}  // namespace foresight::trainer
