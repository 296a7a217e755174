// Checkpoints and resume: a run interrupted after epoch 2 and resumed must
// produce the same metrics file and checkpoint as an uninterrupted one; resume
// without a checkpoint, of a finished run, with early stopping; the lock on
// the checkpoint directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
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

using foresight::testing::ReadFile;
using foresight::testing::ReadMetricsWithoutTimings;
using foresight::testing::SmallOptions;
using foresight::testing::TempDir;
using foresight::testing::TreeContents;
using foresight::testing::WriteFile;

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

class ResumeTest
    : public foresight::testing::SyntheticDatasetTest<160, ::testing::TestWithParam<std::tuple<std::string, bool>>> {};

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

  // The whole file: the first run's final line is gone, no line is doubled.
  EXPECT_EQ(ReadMetricsWithoutTimings(dir_.File("straight.jsonl")),
            ReadMetricsWithoutTimings(dir_.File("split.jsonl")));
  EXPECT_EQ(straight.best_epoch, second.best_epoch);
  EXPECT_EQ(straight.best_val_acc, second.best_val_acc);
  EXPECT_EQ(straight.test_acc, second.test_acc);
  ExpectSameTensors(LastEpochTensors(dir_.File("straight")), LastEpochTensors(dir_.File("split")));
  EXPECT_TRUE(TreeContents(dir_.File("straight")) == TreeContents(dir_.File("split")));
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

class CheckpointTest : public foresight::testing::SyntheticDatasetTest<120> {};

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

TEST_F(CheckpointTest, ResumeRefusesOtherOptions) {
  TrainOptions o = SmallOptions(dir_.File("data"), "sage", true);
  o.epochs = 1;
  o.checkpoint_dir = dir_.File("ckpt");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  o.resume = true;
  o.epochs = 2;
  o.lr = 0.5f;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "resume", "different training options");
  o.lr = SmallOptions("", "sage", true).lr;
  o.input_dropout = 0.0f;  // another model trajectory
  EXPECT_ERROR_CONTAINS(Train(o, &s), "resume", "different training options");
  o.input_dropout = -1.0f;
  o.patience = 5;  // allowed to change
  ASSERT_OK(Train(o, &s));
  EXPECT_EQ(s.epochs_completed, 2);
}

// Paths are bytes, not UTF-8: a dataset directory whose name is not valid
// UTF-8 is recorded (with U+FFFD for the bad bytes) and resumes; the
// options JSON once threw from nlohmann::json::dump and ended the process.
TEST_F(CheckpointTest, ADatasetPathThatIsNotUtf8IsRecordedAndResumes) {
  const std::string bad = dir_.File("data-\xff\xfe-\xc3");
  std::filesystem::rename(dir_.File("data"), bad);
  TrainOptions o = SmallOptions(bad, "sage", true);
  o.epochs = 1;
  o.checkpoint_dir = dir_.File("ckpt");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  const nlohmann::json saved = ReadJson(dir_.File("ckpt") + "/checkpoint.json");
  EXPECT_NE(saved["options"]["dataset"].get<std::string>().find("data-\xef\xbf\xbd"), std::string::npos);
  o.resume = true;
  o.epochs = 2;
  ASSERT_OK(Train(o, &s));
  EXPECT_EQ(s.epochs_completed, 2);
  o.lr = 0.5f;  // the refusal's message quotes the options too
  EXPECT_ERROR_CONTAINS(Train(o, &s), "different training options");
}

// A restart script always passes --resume: with no complete checkpoint yet
// (no directory at all, or only what a first checkpoint killed half way
// left) the run starts from epoch 1, says so in one line, and equals a run
// without --resume, metrics file included.
TEST_F(CheckpointTest, ResumeWithoutACheckpointStartsFromTheBeginning) {
  TrainOptions o = SmallOptions(dir_.File("data"), "sage", true);
  o.epochs = 2;
  o.metrics_file = dir_.File("fresh.jsonl");
  o.checkpoint_dir = dir_.File("fresh");
  TrainSummary fresh;
  ASSERT_OK(Train(o, &fresh));
  for (const bool half_written : {false, true}) {
    SCOPED_TRACE(half_written ? "half-written first checkpoint" : "no checkpoint directory");
    o.checkpoint_dir = dir_.File(half_written ? "half" : "none");
    o.metrics_file = dir_.File(half_written ? "half.jsonl" : "none.jsonl");
    if (half_written) {
      std::filesystem::create_directories(o.checkpoint_dir + "/epoch-000001.tmp");
      std::filesystem::create_directories(o.checkpoint_dir + "/epoch-000001");
      WriteFile(o.checkpoint_dir + "/epoch-000001.tmp/param.x.npy", "partial");
      WriteFile(o.checkpoint_dir + "/checkpoint.json.tmp", "{\"form");
      // The killed run's line of epoch 1, which the checkpoint never got.
      WriteFile(o.metrics_file, ReadFile(dir_.File("fresh.jsonl")).substr(0, 40));
    }
    o.resume = true;
    ::testing::internal::CaptureStderr();
    TrainSummary s;
    const Status st = Train(o, &s);
    const std::string log = ::testing::internal::GetCapturedStderr();
    ASSERT_OK(st);
    EXPECT_NE(log.find("resume: no complete checkpoint in " + o.checkpoint_dir + " yet; starting from epoch 1"),
              std::string::npos)
        << log;
    EXPECT_EQ(s.history.size(), 2u);
    EXPECT_EQ(ReadMetricsWithoutTimings(o.metrics_file), ReadMetricsWithoutTimings(dir_.File("fresh.jsonl")));
    EXPECT_TRUE(TreeContents(o.checkpoint_dir) == TreeContents(dir_.File("fresh")));
  }
}

// Resuming a run that has finished trains nothing, says so, and leaves the
// checkpoint and the metrics file as they were (no second final line).
TEST_F(CheckpointTest, ResumeOfAFinishedRunChangesNothing) {
  TrainOptions o = SmallOptions(dir_.File("data"), "gcn", true);
  o.epochs = 2;
  o.checkpoint_dir = dir_.File("ckpt");
  o.metrics_file = dir_.File("m.jsonl");
  TrainSummary first, again;
  ASSERT_OK(Train(o, &first));
  const std::string metrics = ReadFile(o.metrics_file);
  const auto checkpoint = TreeContents(o.checkpoint_dir);
  const auto mtime = std::filesystem::last_write_time(o.metrics_file);
  o.resume = true;
  ::testing::internal::CaptureStderr();
  const Status st = Train(o, &again);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_OK(st);
  EXPECT_NE(log.find("resume: the run in " + o.checkpoint_dir + " has finished (2 epochs); nothing to train"),
            std::string::npos)
      << log;
  EXPECT_TRUE(again.history.empty());
  EXPECT_EQ(again.epochs_completed, 2);
  EXPECT_EQ(again.best_epoch, first.best_epoch);
  EXPECT_EQ(again.test_acc, first.test_acc);
  EXPECT_EQ(ReadFile(o.metrics_file), metrics);
  EXPECT_TRUE(std::filesystem::last_write_time(o.metrics_file) == mtime) << "the metrics file was rewritten";
  EXPECT_TRUE(TreeContents(o.checkpoint_dir) == checkpoint);
}

// What killed writers left (temporaries, a sub-directory renamed in before
// the pointer moved) is removed as soon as a run opens the directory, even
// one that then has nothing to train; a note names it.
TEST_F(CheckpointTest, OpeningTheDirectoryRemovesWhatKilledWritersLeft) {
  TrainOptions o = SmallOptions(dir_.File("data"), "gcn", true);
  o.epochs = 2;
  o.checkpoint_dir = dir_.File("ckpt");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  const auto checkpoint = TreeContents(o.checkpoint_dir);
  std::filesystem::create_directories(o.checkpoint_dir + "/epoch-000003.tmp");
  WriteFile(o.checkpoint_dir + "/epoch-000003.tmp/param.x.npy.tmp-12-ab", "partial");
  std::filesystem::create_directories(o.checkpoint_dir + "/epoch-000003");
  WriteFile(o.checkpoint_dir + "/epoch-000003/param.x.npy", "renamed in, never named");
  WriteFile(o.checkpoint_dir + "/checkpoint.json.tmp", "{\"form");
  o.resume = true;
  ::testing::internal::CaptureStderr();
  const Status st = Train(o, &s);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_OK(st);
  EXPECT_NE(log.find("checkpoint directory " + o.checkpoint_dir +
                     ": removed what an interrupted run left (checkpoint.json.tmp, epoch-000003, epoch-000003.tmp)"),
            std::string::npos)
      << log;
  EXPECT_TRUE(TreeContents(o.checkpoint_dir) == checkpoint);
}

// A kill between an epoch's metrics line and its checkpoint (or in the
// middle of a line) leaves lines the checkpoint does not hold: the resumed
// run drops them instead of writing those epochs twice.
TEST_F(CheckpointTest, ResumeDropsMetricsLinesTheCheckpointLacks) {
  TrainOptions o = SmallOptions(dir_.File("data"), "sage", false);
  o.epochs = 4;
  o.metrics_file = dir_.File("straight.jsonl");
  o.checkpoint_dir = dir_.File("straight");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  const std::vector<std::string> straight_lines = [&] {
    std::vector<std::string> lines;
    std::istringstream in(ReadFile(o.metrics_file));
    for (std::string line; std::getline(in, line);) lines.push_back(line + "\n");
    return lines;
  }();
  ASSERT_EQ(straight_lines.size(), 5u);

  o.epochs = 2;
  o.metrics_file = dir_.File("split.jsonl");
  o.checkpoint_dir = dir_.File("split");
  ASSERT_OK(Train(o, &s));
  // As a run resumed to 4 epochs and killed after epoch 3's line, then in
  // the middle of epoch 4's, would leave it.
  WriteFile(o.metrics_file, ReadFile(o.metrics_file) + straight_lines[2] + straight_lines[3].substr(0, 30));
  o.epochs = 4;
  o.resume = true;
  ASSERT_OK(Train(o, &s));
  EXPECT_EQ(ReadMetricsWithoutTimings(dir_.File("straight.jsonl")), ReadMetricsWithoutTimings(o.metrics_file));
}

// Early stopping's counter (epochs since the best) is part of the
// checkpoint: a run split where the counter is not zero stops at the same
// epoch as an uninterrupted one.
TEST_F(CheckpointTest, ResumeWithEarlyStoppingEqualsAnUninterruptedRun) {
  TrainOptions o = SmallOptions(dir_.File("data"), "gcn", true);
  o.epochs = 60;
  o.patience = 2;
  o.metrics_file = dir_.File("straight.jsonl");
  o.checkpoint_dir = dir_.File("straight");
  TrainSummary straight;
  ASSERT_OK(Train(o, &straight));
  ASSERT_TRUE(straight.stopped_early) << "this dataset no longer stops early within 60 epochs at patience 2";
  // The epoch before the stop is one epoch past the best (patience 2).
  const int split = straight.epochs_completed - 1;
  ASSERT_GT(split, straight.best_epoch);

  o.epochs = split;
  o.metrics_file = dir_.File("split.jsonl");
  o.checkpoint_dir = dir_.File("split");
  TrainSummary first, second;
  ASSERT_OK(Train(o, &first));
  EXPECT_FALSE(first.stopped_early);
  EXPECT_EQ(ReadJson(dir_.File("split/checkpoint.json"))["epochs_since_best"], split - straight.best_epoch);
  o.epochs = 60;
  o.resume = true;
  ASSERT_OK(Train(o, &second));
  EXPECT_TRUE(second.stopped_early);
  EXPECT_EQ(second.epochs_completed, straight.epochs_completed);
  EXPECT_EQ(second.best_epoch, straight.best_epoch);
  EXPECT_EQ(second.test_acc, straight.test_acc);
  EXPECT_EQ(ReadMetricsWithoutTimings(dir_.File("straight.jsonl")), ReadMetricsWithoutTimings(o.metrics_file));
  EXPECT_TRUE(TreeContents(dir_.File("straight")) == TreeContents(dir_.File("split")));
}

// One training at a time per checkpoint directory: a second run (here
// started from the first one's epoch callback, so the first surely holds
// the directory) is refused with the directory and the holder's pid; the
// lock goes with the run and leaves no file behind.
TEST_F(CheckpointTest, TwoRunsCannotShareACheckpointDirectory) {
  TrainOptions o = SmallOptions(dir_.File("data"), "sage", true);
  o.epochs = 2;
  o.checkpoint_dir = dir_.File("ckpt");
  Status second = Status::OK();
  bool tried = false;
  TrainCallbacks callbacks;
  callbacks.on_epoch = [&](const EpochMetrics&) {
    if (tried) return;
    tried = true;
    TrainOptions other = o;
    other.resume = true;
    TrainSummary ignored;
    second = Train(other, &ignored);
  };
  TrainSummary s;
  ASSERT_OK(Train(o, callbacks, &s));
  ASSERT_TRUE(tried);
  EXPECT_ERROR_CONTAINS(second, "checkpoint directory " + o.checkpoint_dir + " is in use by another training",
                        "pid " + std::to_string(::getpid()));
  EXPECT_EQ(second.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.epochs_completed, 2);
  EXPECT_FALSE(std::filesystem::exists(o.checkpoint_dir + "/lock"));
  o.resume = true;
  o.epochs = 3;
  ASSERT_OK(Train(o, &s));
  EXPECT_EQ(s.epochs_completed, 3);
}

}  // namespace
}  // namespace foresight::trainer
