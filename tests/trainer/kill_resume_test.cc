// Kill and resume, as a restart script does it: a real `foresight train`
// child is SIGKILLed 20 times at random points and restarted each time with
// the same command line (always --resume); the metrics file and the final
// checkpoint then equal an uninterrupted run's (metrics without their
// timing keys; checkpoint files byte for byte).
//
// Two kinds of kill alternate:
// - at a random test point (FORESIGHT_TEST_KILL_AT, a test-only hook
//   of the trainer: trainer/src/test_points.h): the child SIGKILLs itself at
//   the N-th pass of a randomly drawn crash-sensitive step, which lands most
//   kills inside checkpoint writes (between tensor files, before and after
//   renames, before the pointer's rename, between stale removals) and the
//   rest between a metrics line and its checkpoint or at the lock; the last
//   kill comes just before the final metrics line;
// - after a random delay, from this process: anywhere at all (start-up,
//   training, evaluation, writes).
// The random choices come from a fixed seed; where the timed kills land
// depends on the machine's speed, which the result must not.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "synthetic_dataset.h"
#include "testing/child_process.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::testing {
namespace {

struct Child {
  bool killed = false;  // died of SIGKILL
  int exit_code = -1;   // when it exited
  std::string err;      // its stderr
  double seconds = 0;
};

// Runs `foresight args...` with stdout and stderr to files in `dir`; with a
// non-empty kill_at_point the child's own test hook kills it there, with
// kill_after > 0 this process kills it after that many seconds.
Child RunTrain(const std::vector<std::string>& args, const std::string& dir, const std::string& kill_at_point,
               double kill_after) {
  const std::string err_path = dir + "/stderr.txt";
  std::vector<std::string> env;
  if (!kill_at_point.empty()) env.push_back("FORESIGHT_TEST_KILL_AT=" + kill_at_point);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = StartForesight(args, env, dir + "/stdout.txt", err_path);
  Child c;
  if (pid < 0) {
    ADD_FAILURE() << "could not start foresight: " << std::strerror(errno);
    return c;
  }
  int status = 0;
  if (kill_after > 0) {
    const auto deadline = start + std::chrono::duration<double>(kill_after);
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  } else {
    ::waitpid(pid, &status, 0);
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  c.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  if (WIFEXITED(status)) c.exit_code = WEXITSTATUS(status);
  c.err = ReadFile(err_path);
  return c;
}

// The name of the test point a self-killed child reported ("" if none).
std::string KilledAt(const std::string& err) {
  const size_t at = err.rfind("test point ");
  if (at == std::string::npos) return "";
  const size_t open = err.find('(', at), close = err.find(')', at);
  if (open == std::string::npos || close == std::string::npos) return "";
  return err.substr(open + 1, close - open - 1);
}

// The epoch of dir's checkpoint.json, or "none".
std::string CheckpointEpoch(const std::string& dir) {
  const std::string path = dir + "/checkpoint.json";
  if (!std::filesystem::exists(path)) return "none";
  return std::to_string(nlohmann::json::parse(ReadFile(path))["epoch"].get<int>());
}

TEST(KillResumeTest, TwentyKillsThenTheSameMetricsAndCheckpoint) {
  TempDir tmp;
  SyntheticSpec spec;
  spec.num_nodes = 160;
  ASSERT_OK(WriteSyntheticDataset(tmp.File("data"), spec));
  constexpr int kEpochs = 30;  // 20 kills reach about epoch 13: room for slower or faster machines
  constexpr int kKills = 20;
  // A one-layer model: fewer tensor files, so fewer fsyncs per checkpoint.
  auto command = [&](const std::string& name) {
    return std::vector<std::string>{"train", tmp.File("data"), "--model", "sage", "--epochs", std::to_string(kEpochs),
                                    "--batch-size", "40", "--layers", "1", "--fanouts", "5", "--hidden", "16",
                                    "--lr", "0.02", "--seed", "7", "--threads", "1", "--quiet", "--metrics",
                                    tmp.File(name + ".jsonl"), "--checkpoint", tmp.File(name), "--resume"};
  };

  const Child straight = RunTrain(command("straight"), tmp.path(), "", 0);
  ASSERT_EQ(straight.exit_code, 0) << straight.err;
  // Timed kills land within about an epoch (at the uninterrupted run's
  // pace, start-up included) of the child's start.
  const double timed_span = straight.seconds / kEpochs;
  // Test-point kills: each step once, in a random order, at a random pass
  // within the child's next epoch or two (a checkpoint of this model writes
  // 9 tensor files, 12 with a best-* directory).
  std::vector<std::pair<std::string, int>> steps = {
      {"checkpoint.locked", 1},          {"checkpoint.subdir-created", 3}, {"checkpoint.tensor-written", 20},
      {"checkpoint.subdir-filled", 3},   {"checkpoint.subdir-renamed", 3}, {"checkpoint.before-pointer", 2},
      {"atomic-file.synced", 2},         {"checkpoint.pointer-written", 2}, {"checkpoint.stale-removed", 3},
      {"metrics.epoch-written", 2}};

  std::mt19937_64 rng(20261124);
  std::shuffle(steps.begin(), steps.end(), rng);
  int kills = 0, at_points = 0, in_checkpoint_writes = 0;
  std::map<std::string, int> by_point;
  std::string progress;  // the checkpoint's epoch after each kill
  while (kills < kKills) {
    const bool at_point = kills % 2 == 0 || kills == kKills - 1;
    std::string point;
    double delay = 0;
    if (kills == kKills - 1) {
      point = "metrics.before-final";  // last: the run is complete but for its final line
    } else if (at_point) {
      const auto& [name, passes] = steps[static_cast<size_t>(kills / 2) % steps.size()];
      point = name + ":" + std::to_string(std::uniform_int_distribution<int>(1, passes)(rng));
    } else {
      delay = std::uniform_real_distribution<double>(0.01, timed_span)(rng);
    }
    const Child c = RunTrain(command("killed"), tmp.path(), point, delay);
    if (!c.killed) {
      ASSERT_EQ(c.exit_code, 0) << "run " << kills + 1 << " failed:\n" << c.err;
      FAIL() << "the run finished after only " << kills << " kills (raise kEpochs)";
    }
    ++kills;
    progress += " " + CheckpointEpoch(tmp.File("killed"));
    if (at_point) {
      const std::string where = KilledAt(c.err);
      ASSERT_FALSE(where.empty()) << "a child killed by its test hook did not say where:\n" << c.err;
      ++at_points;
      ++by_point[where];
      if ((where.rfind("checkpoint.", 0) == 0 && where != "checkpoint.locked") || where == "atomic-file.synced") {
        ++in_checkpoint_writes;
      }
    }
  }
  const Child last = RunTrain(command("killed"), tmp.path(), "", 0);
  ASSERT_EQ(last.exit_code, 0) << last.err;

  std::string summary;
  for (const auto& [where, n] : by_point) summary += " " + where + " x" + std::to_string(n);
  std::cout << kills << " kills (" << at_points << " at test points:" << summary << "; " << kills - at_points
            << " after random delays up to " << timed_span
            << " s); the checkpoint's epoch after each kill:" << progress << "\n";
  // Every step was a kill site once: 8 of them inside checkpoint writes.
  EXPECT_EQ(by_point.size(), steps.size() + 1) << summary;
  EXPECT_EQ(in_checkpoint_writes, 8) << summary;

  EXPECT_EQ(ReadMetricsWithoutTimings(tmp.File("killed.jsonl")), ReadMetricsWithoutTimings(tmp.File("straight.jsonl")));
  EXPECT_EQ(ReadJsonLines(tmp.File("killed.jsonl")).size(), static_cast<size_t>(kEpochs + 1));
  const auto a = TreeContents(tmp.File("straight"));
  const auto b = TreeContents(tmp.File("killed"));
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a.size(), b.size());
  for (const auto& [path, bytes] : a) {
    auto it = b.find(path);
    if (it == b.end()) {
      ADD_FAILURE() << "the resumed run's checkpoint lacks " << path;
    } else {
      EXPECT_TRUE(it->second == bytes) << path << " differs";
    }
  }
  for (const auto& [path, bytes] : b) {
    EXPECT_TRUE(a.count(path)) << "the resumed run's checkpoint has an extra " << path;
  }
}

}  // namespace
}  // namespace foresight::testing
