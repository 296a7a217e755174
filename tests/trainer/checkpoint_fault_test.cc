// Fault injection into checkpoint writes, as partitioning's full-disk test
// does for its output: the trainer's test points (trainer/src/test_points.h)
// fail a chosen step with ENOSPC. Whatever step fails, the run reports the
// full disk, leaves no temporary file or directory, and the checkpoint it
// leaves (the previous one, or none) resumes to the same metrics file and
// checkpoint as an undisturbed run. Also: a checkpoint directory held by
// another process is refused with that process's pid, and freed when it dies.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint_lock.h"
#include "foresight/core/communicator.h"
#include "foresight/trainer/trainer.h"
#include "synthetic_dataset.h"
#include "test_points.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

using foresight::testing::ReadMetricsWithoutTimings;
using foresight::testing::SmallOptions;
using foresight::testing::TempDir;
using foresight::testing::TreeContents;

// Paths under `dir` whose name ends in ".tmp" or holds ".tmp-" (SaveNpy's
// temporaries).
std::vector<std::string> Temporaries(const std::string& dir) {
  std::vector<std::string> out;
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find(".tmp") != std::string::npos) out.push_back(e.path().string());
  }
  return out;
}

class CheckpointFaultTest : public foresight::testing::SyntheticDatasetTest<120> {
 protected:
  void TearDown() override { internal::SetFailAtPointForTesting(0); }
};

TEST_F(CheckpointFaultTest, AFullDiskAtAnyStepLeavesTheLastCheckpointUsable) {
  TrainOptions o = SmallOptions(dir_.File("data"), "gcn", true);
  o.epochs = 2;
  o.metrics_file = dir_.File("straight.jsonl");
  o.checkpoint_dir = dir_.File("straight");
  TrainSummary s;
  internal::SetFailAtPointForTesting(0);
  ASSERT_OK(Train(o, &s));
  const std::vector<std::string> points = internal::SetFailAtPointForTesting(0);
  // Each kind of step once at the first checkpoint (no previous one to fall
  // back on) and once at the last (with a best-* directory to keep and
  // stale ones to remove): the first and the last occurrence of each name.
  std::map<std::string, std::pair<int64_t, int64_t>> where;
  for (size_t i = 0; i < points.size(); ++i) {
    auto [it, fresh] = where.try_emplace(points[i], int64_t(i) + 1, int64_t(i) + 1);
    if (!fresh) it->second.second = int64_t(i) + 1;
  }
  for (const char* step : {"checkpoint.locked", "checkpoint.subdir-created", "checkpoint.tensor-written",
                           "checkpoint.subdir-filled", "checkpoint.subdir-renamed", "checkpoint.before-pointer",
                           "atomic-file.synced", "checkpoint.pointer-written", "checkpoint.stale-removed",
                           "metrics.epoch-written", "metrics.before-final"}) {
    EXPECT_TRUE(where.count(step)) << "a " << o.epochs << "-epoch run no longer passes the step " << step;
  }
  std::set<int64_t> fail_at;
  for (const auto& [name, first_last] : where) fail_at.insert({first_last.first, first_last.second});

  for (const int64_t n : fail_at) {
    const std::string step = points[static_cast<size_t>(n - 1)];
    SCOPED_TRACE("full disk at step " + std::to_string(n) + " of " + std::to_string(points.size()) + " (" +
                 step + ")");
    o.metrics_file = dir_.File("run" + std::to_string(n) + ".jsonl");
    o.checkpoint_dir = dir_.File("run" + std::to_string(n));
    o.resume = false;
    internal::SetFailAtPointForTesting(n);
    const Status failed = Train(o, &s);
    internal::SetFailAtPointForTesting(0);
    EXPECT_ERROR_CONTAINS(failed, "No space left on device", step);
    EXPECT_EQ(failed.code(), StatusCode::kResourceExhausted);
    EXPECT_EQ(Temporaries(o.checkpoint_dir), std::vector<std::string>{});
    EXPECT_FALSE(std::filesystem::exists(o.checkpoint_dir + "/lock"));
    // Exactly the checkpoint the pointer names is left, or, before the
    // first one, no directory at all. (A failure after the pointer moved on
    // may leave the previous checkpoint's sub-directories too: garbage of a
    // complete write, removed when the directory is next opened.)
    std::set<std::string> expected;
    if (std::filesystem::exists(o.checkpoint_dir + "/checkpoint.json")) {
      const auto j = nlohmann::json::parse(foresight::testing::ReadFile(o.checkpoint_dir + "/checkpoint.json"));
      expected = {"checkpoint.json", j["last"].get<std::string>(), j["best"].get<std::string>()};
    }
    std::set<std::string> entries;
    if (std::filesystem::exists(o.checkpoint_dir)) {
      for (const auto& e : std::filesystem::directory_iterator(o.checkpoint_dir)) {
        entries.insert(e.path().filename().string());
      }
    }
    if (step == "checkpoint.pointer-written" || step == "checkpoint.stale-removed") {
      for (auto it = entries.begin(); it != entries.end();) {
        const bool older = !expected.count(*it) && (it->rfind("epoch-", 0) == 0 || it->rfind("best-", 0) == 0);
        it = older ? entries.erase(it) : std::next(it);
      }
    }
    EXPECT_EQ(entries, expected);
    EXPECT_EQ(std::filesystem::exists(o.checkpoint_dir), !expected.empty());
    o.resume = true;
    ASSERT_OK(Train(o, &s));
    EXPECT_EQ(ReadMetricsWithoutTimings(o.metrics_file), ReadMetricsWithoutTimings(dir_.File("straight.jsonl")));
    EXPECT_TRUE(TreeContents(o.checkpoint_dir) == TreeContents(dir_.File("straight")));
  }
}

// Another process holding the directory (its pid in the lock file, as a
// training writes it): this run is refused with that pid; once the holder
// is killed the kernel drops its lock and the run goes ahead.
TEST_F(CheckpointFaultTest, ADirectoryHeldByAnotherProcessIsRefusedUntilItDies) {
  const std::string ckpt = dir_.File("ckpt");
  std::filesystem::create_directories(ckpt);
  const std::string lock = ckpt + "/lock";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {  // only async-signal-safe calls until it is killed
    const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
    char pid[16];
    int len = 0;
    for (pid_t p = ::getpid(); p > 0; p /= 10) pid[len++] = static_cast<char>('0' + p % 10);
    for (int i = 0; i < len / 2; ++i) std::swap(pid[i], pid[len - 1 - i]);
    pid[len++] = '\n';
    if (::write(fd, pid, static_cast<size_t>(len)) != len || ::write(ready[1], "x", 1) != 1) ::_exit(1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1) << "the lock holder did not start";
  ::close(ready[0]);

  TrainOptions o = SmallOptions(dir_.File("data"), "gcn", true);
  o.epochs = 1;
  o.checkpoint_dir = ckpt;
  o.resume = true;
  TrainSummary s;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "checkpoint directory " + ckpt + " is in use by another training",
                        "pid " + std::to_string(holder), lock);
  ASSERT_EQ(::kill(holder, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(holder, &status, 0), holder);
  ASSERT_OK(Train(o, &s));  // the stale lock file of the dead holder is reused
  EXPECT_EQ(s.epochs_completed, 1);
  EXPECT_FALSE(std::filesystem::exists(lock));
}

// OpenCheckpointDir, how DLRM and the link models take their directory:
// the writer holds the lock and then removes leftovers (a failure there
// is the call's); a second open is refused while the lock lives; a
// non-writer rank neither locks nor removes.
int leftover_removals = 0;
Status CountRemoval(const std::string&) {
  ++leftover_removals;
  return Status::OK();
}
Status FailRemoval(const std::string& dir) { return DataLoss("cannot remove the leftovers in " + dir); }

TEST_F(CheckpointFaultTest, OpenCheckpointDirLocksThenRemovesLeftoversOnTheWriterOnly) {
  const std::string ckpt = dir_.File("shared_ckpt");
  std::unique_ptr<Communicator> one = MakeSingleProcessCommunicator();
  leftover_removals = 0;
  std::unique_ptr<internal::CheckpointDirLock> lock;
  ASSERT_OK(internal::OpenCheckpointDir(ckpt, /*writer=*/true, one.get(), CountRemoval, &lock));
  ASSERT_NE(lock, nullptr);
  EXPECT_EQ(leftover_removals, 1);
  EXPECT_TRUE(std::filesystem::exists(ckpt + "/lock"));

  std::unique_ptr<internal::CheckpointDirLock> second;
  const Status refused = internal::OpenCheckpointDir(ckpt, true, nullptr, CountRemoval, &second);
  EXPECT_ERROR_CONTAINS(refused, "checkpoint directory " + ckpt + " is in use by another training");
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(second, nullptr);
  EXPECT_EQ(leftover_removals, 1) << "leftovers removed without the lock";

  std::unique_ptr<internal::CheckpointDirLock> reader;
  ASSERT_OK(internal::OpenCheckpointDir(ckpt, /*writer=*/false, nullptr, CountRemoval, &reader));
  EXPECT_EQ(reader, nullptr);
  EXPECT_EQ(leftover_removals, 1);

  lock.reset();
  EXPECT_FALSE(std::filesystem::exists(ckpt + "/lock"));
  const Status failed = internal::OpenCheckpointDir(ckpt, true, one.get(), FailRemoval, &second);
  EXPECT_ERROR_CONTAINS(failed, "cannot remove the leftovers in " + ckpt);
}

}  // namespace
}  // namespace foresight::trainer
