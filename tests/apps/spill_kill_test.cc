// An edge-list preprocessing run killed (SIGKILL) after it spilled sorted
// runs leaves nothing in its --temp-dir (the runs are unlinked as soon as
// they are created) and no output; the same command then completes. Also:
// the run logs its edge estimate and the disk space it needs up front, and
// a budget below what the process already holds is said.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>

#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

using testing::Quote;

TEST(SpillKillTest, KilledAfterASpillLeavesNoSpillFilesAndTheRerunCompletes) {
  testing::TempDir dir;
  std::mt19937_64 rng(5);
  std::string edges;
  for (int i = 0; i < 200000; ++i) edges += std::to_string(rng() % 50000) + " " + std::to_string(rng() % 50000) + "\n";
  testing::WriteFile(dir.File("edges.txt"), edges);
  const std::string temp = dir.File("spill");
  std::filesystem::create_directories(temp);
  testing::WriteFile(dir.File("spill/.keep"), "");
  const std::string args = "preprocess --format edgelist --edges " + Quote(dir.File("edges.txt")) +
                           " --no-header --memory-budget 1M --threads 2 --temp-dir " + Quote(temp) + " --output " +
                           Quote(dir.File("out"));
  // 1 MiB holds 32768 buffered edges: 200k edges spill ~6 runs.
  const testing::CliResult killed =
      testing::RunForesight(args, "FORESIGHT_TEST_KILL_AT=edge-sort.run-spilled:3 ");
  // The shell that starts the child reports its SIGKILL as 128 + 9.
  EXPECT_TRUE(killed.code == -1 || killed.code == 137)
      << "expected a SIGKILL at the third spilled run, got exit code " << killed.code << "; stderr: " << killed.err;
  EXPECT_NE(killed.err.find("edge-sort.run-spilled"), std::string::npos) << killed.err;
  // --memory-budget is the process's peak RSS: 1 MiB is below what the
  // process holds before it starts, which is said.
  EXPECT_NE(killed.err.find("is below what this process holds before it starts"), std::string::npos)
      << killed.err;
  EXPECT_EQ(testing::Entries(temp), std::vector<std::string>{".keep"}) << "spill files left behind";
  EXPECT_FALSE(testing::PathExists(dir.File("out/manifest.json")));

  const testing::CliResult rerun = testing::RunForesight(args);
  ASSERT_EQ(rerun.code, 0) << rerun.err;
  EXPECT_TRUE(testing::PathExists(dir.File("out/manifest.json")));
  EXPECT_EQ(testing::Entries(temp), std::vector<std::string>{".keep"});
  // The up-front estimate and disk need are logged.
  EXPECT_NE(rerun.err.find("edges in " + dir.File("edges.txt")), std::string::npos) << rerun.err;
  EXPECT_NE(rerun.err.find("of spilled runs in " + temp), std::string::npos) << rerun.err;
}

}  // namespace
}  // namespace foresight
