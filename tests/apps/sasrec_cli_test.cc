// End-to-end: `foresight preprocess --format sequences` and `foresight train
// --model sasrec` as a user runs them: the Amazon Games counts (skipped when
// ../shared/datasets lacks it), a small log trained from the recipe's keys
// with its metrics file, and bad input named by file and line with nothing
// left at the output.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

using testing::Quote;
using Result = testing::CliResult;

TEST(SasrecCli, GamesCounts) {
  const std::string src = testing::SharedDataset("amazon-games-sasrec");
  if (src.empty()) GTEST_SKIP() << "amazon-games-sasrec not found in ../shared/datasets";
  testing::TempDir dir;
  Result r = testing::RunForesight("preprocess --format sequences " + Quote(src + "/Video.txt.xz") + " --output " +
                                   Quote(dir.File("games")));
  ASSERT_EQ(r.code, 0) << r.err;
  // The MANIFEST's counts; 112 users have fewer than 3 actions.
  EXPECT_NE(r.out.find("31013 users (30901 evaluated: the rest have fewer than 3 actions), 23715 items, 287107 "
                       "actions"),
            std::string::npos)
      << r.out;
}

TEST(SasrecCli, TrainWithConfigAndMetrics) {
  testing::TempDir dir;
  std::string log;
  for (int u = 0; u < 40; ++u) {
    for (int t = 0; t < 6; ++t) log += std::to_string(u) + "\t" + std::to_string((u + t) % 20) + "\n";
  }
  testing::WriteFile(dir.File("log.txt"), log);
  Result r = testing::RunForesight("preprocess --format sequences " + Quote(dir.File("log.txt")) + " --output " +
                                   Quote(dir.File("seq")));
  ASSERT_EQ(r.code, 0) << r.err;
  testing::WriteFile(dir.File("cfg.yaml"),
                     "model: sasrec\nblocks: 1\nheads: 1\nhidden: 8\nmax-length: 5\ndropout: 0.2\noptimizer: adam\n"
                     "lr: 0.01\nadam-beta2: 0.98\nweight-decay: 0\nbatch-size: 16\nepochs: 2\n");
  r = testing::RunForesight("train " + Quote(dir.File("seq")) + " --config " + Quote(dir.File("cfg.yaml")) +
                            " --threads 2 --metrics " + Quote(dir.File("m.jsonl")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("test_hr10"), std::string::npos) << r.out;
  const std::vector<nlohmann::json> lines = testing::ReadJsonLines(dir.File("m.jsonl"));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(lines[0].contains("val_ndcg10_full"));
  EXPECT_EQ(lines.back()["final"], true);
  for (const char* key : {"best_epoch", "test_hr10", "test_ndcg10", "test_hr10_full", "test_ndcg10_full"}) {
    EXPECT_TRUE(lines.back().contains(key)) << key;
  }
}

TEST(SasrecCli, BadInputNamesTheLineAndLeavesNothing) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("log.txt"), "1 10\n1 11\n2 10\n1 12\n");
  Result r = testing::RunForesight("preprocess --format sequences " + Quote(dir.File("log.txt")) + " --output " +
                                   Quote(dir.File("seq")));
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("log.txt:4: expected the lines of each user together"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("seq")));
  // A graph dataset is not a sequences dataset.
  testing::WriteFile(dir.File("ok.txt"), "1 10\n1 11\n1 12\n");
  ASSERT_EQ(testing::RunForesight("preprocess --format sequences " + Quote(dir.File("ok.txt")) + " --output " +
                                  Quote(dir.File("seq")))
                .code,
            0);
  r = testing::RunForesight("train " + Quote(dir.File("seq")) + " --model sasrec --layers 3");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--layers: does not apply to sasrec"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace foresight
