// Kills real `foresight preprocess` and `foresight partition` children with
// SIGKILL, at each named point of the dataset commit (the test hooks of
// storage/src/test_hooks.h) and at random moments, then runs the same
// command again. After every kill the output is absent or a complete
// dataset equal to an undisturbed run's, and every staging directory left
// is refused as a dataset (by Dataset::Open, `train` and `partition`);
// after the rerun the output equals the undisturbed run's byte for byte
// (the partitioner's timings in the manifest aside), the rerun said which
// stale staging directories it removed, and none is left.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "foresight/storage/dataset.h"
#include "testing/child_process.h"
#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::DirContents;
using testing::Entries;
using Files = std::map<std::string, std::string>;

constexpr char kMarker[] = ".foresight-staging.json";

// A kill: at a named crash point, or `delay` after the start.
struct Kill {
  std::string point;                  // "" = at `delay`
  std::chrono::microseconds delay{0};
};

// The files of dataset `dir`, without a staging marker, and with the
// partitioner's timings dropped from the manifest.
Files Normalized(const std::string& dir) {
  Files files = DirContents(dir);
  files.erase(kMarker);
  auto it = files.find(storage::kManifestFile);
  if (it != files.end()) {
    json m = json::parse(it->second);
    if (m.contains("partitions") && m["partitions"].is_object()) {
      m["partitions"].erase("seconds");
      m["partitions"].erase("peak_rss_bytes");
    }
    it->second = m.dump();
  }
  return files;
}

// Which files of `a` and `b` differ, for failure messages.
std::string Diff(const Files& a, const Files& b) {
  std::string d;
  for (const auto& [name, bytes] : a) {
    auto it = b.find(name);
    if (it == b.end()) d += " " + name + " (only in the output)";
    else if (it->second != bytes) d += " " + name + " (differs)";
  }
  for (const auto& [name, bytes] : b) {
    if (a.count(name) == 0) d += " " + name + " (missing)";
  }
  return d.empty() ? " none" : d;
}

class StagingKillTest : public ::testing::Test {
 protected:
  // `args` writes `out_` (a path under data/, whose parent the first run
  // makes) with --overwrite; `reference` is an undisturbed run's output.
  void Init(std::vector<std::string> args, const std::string& reference) {
    args_ = std::move(args);
    ref_ = Normalized(reference);
    ASSERT_FALSE(ref_.empty());
  }

  // Runs the command once without a kill; returns its stderr.
  std::string Rerun(const std::vector<std::string>& env = {}) {
    const pid_t pid = testing::StartForesight(args_, env, tmp_.File("rerun.out"), tmp_.File("rerun.err"));
    EXPECT_GT(pid, 0);
    const int code = testing::WaitChild(pid);
    const std::string err = testing::ReadFile(tmp_.File("rerun.err"));
    EXPECT_EQ(code, 0) << err;
    return err;
  }

  // The staging directories beside the output, by name.
  std::vector<std::string> Staging() {
    std::vector<std::string> s;
    if (!fs::exists(data_)) return s;
    for (const std::string& name : Entries(data_)) {
      if (name.rfind("out.tmp-", 0) == 0) s.push_back(name);
    }
    return s;
  }

  // Runs the command and kills it as `k` says, then checks what is left.
  void RunAndKill(const Kill& k, const std::vector<std::string>& env_in) {
    SCOPED_TRACE(k.point.empty() ? "kill after " + std::to_string(k.delay.count()) + " us"
                                 : "kill at " + k.point);
    std::vector<std::string> env = env_in;
    if (!k.point.empty()) env.push_back("FORESIGHT_TEST_KILL_AT=" + k.point);
    const bool existed = fs::exists(out_);
    const std::vector<std::string> stale = Staging();
    const pid_t pid = testing::StartForesight(args_, env, tmp_.File("kill.out"), tmp_.File("kill.err"));
    ASSERT_GT(pid, 0);
    if (k.point.empty()) {
      std::this_thread::sleep_for(k.delay);
      ::kill(pid, SIGKILL);
    }
    const int code = testing::WaitChild(pid);
    const std::string err = testing::ReadFile(tmp_.File("kill.err"));
    if (k.point.empty()) {
      // A run may finish before the kill lands; it must never fail.
      EXPECT_TRUE(code == -SIGKILL || code == 0) << "exit " << code << ": " << err;
    } else {
      EXPECT_EQ(code, -SIGKILL) << "the run did not reach crash point " << k.point << ": " << err;
      // Every crash point comes after the cleanup of what earlier kills left.
      for (const std::string& name : stale) {
        EXPECT_NE(err.find("removed stale staging directory " + data_ + "/" + name), std::string::npos)
            << "no log line for " << name << " in: " << err;
      }
    }
    ++kills_;
    // The output: absent only where the commit had not happened (or, with
    // two renames, between them); otherwise a complete dataset that equals
    // the reference (the old and the new one do), maybe marked for removal
    // under another name.
    if (k.point == "old-moved" || (!existed && k.point != "" && k.point != "committed")) {
      EXPECT_FALSE(fs::exists(out_));
    } else if (k.point != "" || existed || fs::exists(out_)) {
      ASSERT_TRUE(fs::exists(out_));
      auto ds = storage::Dataset::Open(out_);
      EXPECT_TRUE(ds.ok()) << ds.status().ToString();
      const Files now = Normalized(out_);
      EXPECT_TRUE(now == ref_) << "files that differ:" << Diff(now, ref_);
    }
    for (const std::string& name : Staging()) {
      const std::string dir = data_ + "/" + name;
      auto ds = storage::Dataset::Open(dir);
      EXPECT_FALSE(ds.ok()) << dir << " opens as a dataset";
      if (fs::exists(dir + "/" + storage::kManifestFile)) {
        ++complete_staging_;
        EXPECT_ERROR_CONTAINS(ds, dir + " is the staging directory of an unfinished write of dataset " + out_);
      }
    }
  }

  // A round: the kills, then the command again, which must remove every
  // staging directory (saying so) and leave exactly the reference.
  void Round(const std::vector<Kill>& kills, const std::vector<std::string>& env = {}) {
    for (const Kill& k : kills) RunAndKill(k, env);
    const std::vector<std::string> stale = Staging();
    const std::string err = Rerun(env);
    for (const std::string& name : stale) {
      EXPECT_NE(err.find("removed stale staging directory " + data_ + "/" + name), std::string::npos)
          << "no log line for " << name << " in: " << err;
    }
    if (stale.empty()) {
      EXPECT_EQ(err.find("stale staging"), std::string::npos) << err;
    }
    EXPECT_EQ(Entries(data_), std::vector<std::string>{"out"});
    const Files now = Normalized(out_);
    EXPECT_TRUE(now == ref_) << "files that differ:" << Diff(now, ref_);
    EXPECT_FALSE(fs::exists(out_ + "/" + kMarker));
  }

  // `rounds` rounds of 1-3 kills at uniform random moments within `span`
  // (an undisturbed run's wall time), half of them starting without output.
  void RandomRounds(int rounds, std::chrono::microseconds span, uint32_t seed) {
    std::mt19937 rng(seed);
    for (int r = 0; r < rounds; ++r) {
      if (r % 2 == 0) fs::remove_all(out_);
      std::vector<Kill> kills(1 + rng() % 3);
      for (Kill& k : kills) k.delay = std::chrono::microseconds(rng() % (span.count() + 1));
      Round(kills);
    }
  }

  // The wall time of one undisturbed run of the command (to spread random
  // kills over; never asserted on).
  std::chrono::microseconds TimeOneRun() {
    const auto t0 = std::chrono::steady_clock::now();
    Rerun();
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
  }

  testing::TempDir tmp_;
  const std::string data_ = tmp_.File("data");
  const std::string out_ = data_ + "/out";
  std::vector<std::string> args_;
  Files ref_;
  int kills_ = 0;
  int complete_staging_ = 0;
};

// A random graph: `n` nodes, `e` text edges, 8 csv features, 5 classes.
void WriteEdgeListInputs(const std::string& dir, int n, int e) {
  fs::create_directories(dir);
  std::mt19937 rng(7);
  std::string edges, feats, labels;
  for (int i = 0; i < e; ++i) edges += std::to_string(rng() % n) + " " + std::to_string(rng() % n) + "\n";
  for (int v = 0; v < n; ++v) {
    for (int j = 0; j < 8; ++j) feats += (j ? "," : "") + std::to_string(rng() % 1000 / 1000.0);
    feats += "\n";
    labels += std::to_string(rng() % 5) + "\n";
  }
  testing::WriteFile(dir + "/edges.txt", edges);
  testing::WriteFile(dir + "/feats.csv", feats);
  testing::WriteFile(dir + "/labels.txt", labels);
}

TEST_F(StagingKillTest, PreprocessKilledAnywhereThenRerunEqualsAnUndisturbedRun) {
  const std::string in = tmp_.File("in");
  WriteEdgeListInputs(in, 3000, 30000);
  const std::vector<std::string> common = {"preprocess", "--edges", in + "/edges.txt", "--features",
                                           in + "/feats.csv", "--labels", in + "/labels.txt", "--undirected",
                                           "--quiet", "--overwrite", "--output"};
  std::vector<std::string> ref_args = common;
  ref_args.push_back(tmp_.File("ref"));
  args_ = ref_args;
  const auto span = TimeOneRun();
  std::vector<std::string> args = common;
  args.push_back(out_);
  Init(args, tmp_.File("ref"));

  // Fresh output: every point before the commit (each run removes what the
  // one before left), then at the commit itself.
  {
    SCOPED_TRACE("fresh output");
    for (const char* p : {"staging-created", "staging-locked", "manifest-written", "before-commit"}) {
      RunAndKill({p}, {});
    }
    // A complete staging dir is no dataset for the commands either.
    const std::vector<std::string> stale = Staging();
    ASSERT_EQ(stale.size(), 1u);
    const std::string complete = data_ + "/" + stale[0];
    ASSERT_TRUE(fs::exists(complete + "/" + storage::kManifestFile));
    testing::CliResult r = testing::RunForesight("train " + testing::Quote(complete) + " --epochs 1 --quiet");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("is the staging directory of an unfinished write of dataset " + out_), std::string::npos)
        << r.err;
    r = testing::RunForesight("partition " + testing::Quote(complete) + " --parts 2 --method stream --quiet");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("is the staging directory"), std::string::npos) << r.err;
    Round({});
    fs::remove_all(out_);
    Round({{"committed"}});
  }
  {
    SCOPED_TRACE("replacing with renameat2(RENAME_EXCHANGE)");
    Round({{"old-marked"}, {"committed"}, {"replaced"}});
  }
  {
    SCOPED_TRACE("replacing with two renames");
    Round({{"old-moved"}, {"committed"}, {"replaced"}}, {"FORESIGHT_TEST_NO_RENAME_EXCHANGE=1"});
  }
  RandomRounds(3, span, 11);
  EXPECT_GE(complete_staging_, 4);
}

TEST_F(StagingKillTest, PartitionKilledAnywhereThenRerunEqualsAnUndisturbedRun) {
  const std::string g = tmp_.File("g");
  testing::CliResult r = testing::RunForesight("generate graph --nodes 2000 --edges 16000 --features 8 --classes 4 "
                                               "--seed 3 --quiet --threads 2 --output " + testing::Quote(g));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> common = {"partition", g, "--parts", "4", "--method", "stream",
                                           "--quiet", "--overwrite", "--output"};
  std::vector<std::string> ref_args = common;
  ref_args.push_back(tmp_.File("ref"));
  args_ = ref_args;
  const auto span = TimeOneRun();
  std::vector<std::string> args = common;
  args.push_back(out_);
  Init(args, tmp_.File("ref"));
  const Files input = DirContents(g);

  Round({{"staging-locked"}, {"before-commit"}});
  Round({{"old-marked"}, {"committed"}, {"replaced"}});
  RandomRounds(2, span, 12);
  EXPECT_GE(complete_staging_, 2);
  EXPECT_TRUE(DirContents(g) == input);
}

}  // namespace
}  // namespace foresight
