// Checkpoints and resume: a run interrupted after epoch 2 and resumed must
// produce the same metrics and parameters as an uninterrupted one.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "foresight/storage/npy.h"
#include "foresight/trainer/trainer.h"
#include "synthetic_dataset.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

using foresight::testing::ReadMetricsWithoutTimings;
using foresight::testing::SmallOptions;
using foresight::testing::TempDir;

std::vector<nlohmann::json> EpochLines(const std::string& path) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& j : ReadMetricsWithoutTimings(path)) {
    if (!j.value("final", false)) out.push_back(j);
  }
  return out;
}

nlohmann::json ReadJson(const std::string& path) {
  return nlohmann::json::parse(foresight::testing::ReadFile(path));
}

// Every .npy of checkpoint `dir`'s last epoch, by file name.
std::map<std::string, Tensor> LastEpochTensors(const std::string& dir) {
  const std::string sub = dir + "/" + ReadJson(dir + "/checkpoint.json")["last"].get<std::string>();
  std::map<std::string, Tensor> out;
  for (const auto& e : std::filesystem::directory_iterator(sub)) {
    auto t = storage::LoadNpy(e.path().string());
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (t.ok()) out[e.path().filename().string()] = *t;
  }
  return out;
}

void ExpectSameTensors(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) {
    ASSERT_TRUE(b.count(name)) << name;
    const Tensor& u = b.at(name);
    ASSERT_EQ(t.shape(), u.shape()) << name;
    ASSERT_EQ(t.nbytes(), u.nbytes()) << name;
    EXPECT_EQ(0, std::memcmp(t.raw_data(), u.raw_data(), t.nbytes())) << name << " differs";
  }
}

class ResumeTest : public ::testing::TestWithParam<std::tuple<std::string, bool>> {
 protected:
  void SetUp() override {
    foresight::testing::SyntheticSpec spec;
    spec.num_nodes = 160;
    ASSERT_OK(foresight::testing::WriteSyntheticDataset(dir_.File("data"), spec));
  }
  TempDir dir_;
};

TEST_P(ResumeTest, TwoPlusTwoEqualsFour) {
  TrainOptions o = SmallOptions(dir_.File("data"), std::get<0>(GetParam()), std::get<1>(GetParam()));
  o.epochs = 4;
  o.metrics_file = dir_.File("straight.jsonl");
  o.checkpoint_dir = dir_.File("straight");
  TrainSummary straight;
  ASSERT_OK(Train(o, &straight));

  o.epochs = 2;
  o.metrics_file = dir_.File("split.jsonl");
  o.checkpoint_dir = dir_.File("split");
  TrainSummary first;
  ASSERT_OK(Train(o, &first));
  EXPECT_EQ(ReadJson(dir_.File("split/checkpoint.json"))["epoch"], 2);
  o.epochs = 4;
  o.resume = true;
  o.threads = 2;  // thread count may change on resume
  TrainSummary second;
  ASSERT_OK(Train(o, &second));
  EXPECT_EQ(second.history.size(), 2u);
  EXPECT_EQ(second.epochs_completed, 4);

  EXPECT_EQ(EpochLines(dir_.File("straight.jsonl")), EpochLines(dir_.File("split.jsonl")));
  EXPECT_EQ(straight.best_epoch, second.best_epoch);
  EXPECT_EQ(straight.best_val_acc, second.best_val_acc);
  EXPECT_EQ(straight.test_acc, second.test_acc);
  // The resumed run's final line equals the straight run's.
  EXPECT_EQ(ReadMetricsWithoutTimings(dir_.File("straight.jsonl")).back(),
            ReadMetricsWithoutTimings(dir_.File("split.jsonl")).back());
  ExpectSameTensors(LastEpochTensors(dir_.File("straight")), LastEpochTensors(dir_.File("split")));
  const nlohmann::json a = ReadJson(dir_.File("straight/checkpoint.json"));
  const nlohmann::json b = ReadJson(dir_.File("split/checkpoint.json"));
  for (const char* key : {"epoch", "optimizer_steps", "best_epoch", "best_val_acc", "test_acc", "options_hash"}) {
    EXPECT_EQ(a[key], b[key]) << key;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ResumeTest,
                         ::testing::Values(std::make_tuple(std::string("sage"), false),
                                           std::make_tuple(std::string("gat"), false),
                                           std::make_tuple(std::string("gcn"), true)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + (std::get<1>(info.param) ? "_full" : "_minibatch");
                         });

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    foresight::testing::SyntheticSpec spec;
    spec.num_nodes = 120;
    ASSERT_OK(foresight::testing::WriteSyntheticDataset(dir_.File("data"), spec));
  }
  TempDir dir_;
};

TEST_F(CheckpointTest, KeepsOnlyTheLastAndBestEpochs) {
  TrainOptions o = SmallOptions(dir_.File("data"), "sage", true);
  o.epochs = 6;
  o.checkpoint_dir = dir_.File("ckpt");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  const nlohmann::json j = ReadJson(dir_.File("ckpt/checkpoint.json"));
  EXPECT_EQ(j["epoch"], 6);
  EXPECT_EQ(j["best_epoch"], s.best_epoch);
  EXPECT_EQ(j["model"]["kind"], "sage");
  EXPECT_EQ(j["model"]["hidden"], 16);
  std::set<std::string> entries;
  for (const auto& e : std::filesystem::directory_iterator(dir_.File("ckpt"))) {
    entries.insert(e.path().filename().string());
  }
  char best[32];
  std::snprintf(best, sizeof(best), "best-%06d", s.best_epoch);
  std::set<std::string> expected = {"checkpoint.json", "epoch-000006", best};
  EXPECT_EQ(entries, expected);
  // Adam keeps two moments per parameter beside the parameters.
  int params = 0, moments = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_.File("ckpt/epoch-000006"))) {
    const std::string name = e.path().filename().string();
    params += name.rfind("param.", 0) == 0;
    moments += name.rfind("opt.", 0) == 0;
  }
  EXPECT_GT(params, 0);
  EXPECT_EQ(moments, 2 * params);
}

TEST_F(CheckpointTest, ResumeRefusesOtherOptionsAndMissingCheckpoints) {
  TrainOptions o = SmallOptions(dir_.File("data"), "sage", true);
  o.epochs = 1;
  o.checkpoint_dir = dir_.File("ckpt");
  TrainSummary s;
  o.resume = true;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "no checkpoint in", dir_.File("ckpt"));
  o.resume = false;
  ASSERT_OK(Train(o, &s));
  o.resume = true;
  o.epochs = 2;
  o.lr = 0.5f;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "resume", "different training options");
  o.lr = SmallOptions("", "sage", true).lr;
  o.patience = 5;  // allowed to change
  ASSERT_OK(Train(o, &s));
  EXPECT_EQ(s.epochs_completed, 2);
}

TEST_F(CheckpointTest, ResumeOfAFinishedRunTrainsNothing) {
  TrainOptions o = SmallOptions(dir_.File("data"), "gcn", true);
  o.epochs = 2;
  o.checkpoint_dir = dir_.File("ckpt");
  TrainSummary first, again;
  ASSERT_OK(Train(o, &first));
  o.resume = true;
  ASSERT_OK(Train(o, &again));
  EXPECT_TRUE(again.history.empty());
  EXPECT_EQ(again.epochs_completed, 2);
  EXPECT_EQ(again.best_epoch, first.best_epoch);
  EXPECT_EQ(again.test_acc, first.test_acc);
}

}  // namespace
}  // namespace foresight::trainer
