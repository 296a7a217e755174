// End-to-end: `foresight preprocess --format criteo|csv` and `foresight
// generate clicks` as a user runs them: the real Criteo sample in both id
// modes (skipped when ../shared/datasets lacks it), a CSV error, and a small
// generated log.
#include "testing/cli.h"

#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "testing/testing.h"

namespace foresight {
namespace {

using testing::Quote;
using Result = testing::CliResult;

nlohmann::json Manifest(const std::string& dir) {
  std::ifstream f(dir + "/manifest.json");
  return nlohmann::json::parse(f);
}

TEST(ClicksCli, CriteoSampleInBothIdModes) {
  const std::string src = testing::SharedDataset("criteo-kaggle-8k");
  if (src.empty()) GTEST_SKIP() << "criteo-kaggle-8k not found in ../shared/datasets";
  testing::TempDir dir;
  const std::string files = " --train " + Quote(src + "/train.tsv.xz") + " --val " + Quote(src + "/dev.tsv.xz") +
                            " --test " + Quote(src + "/test.tsv.xz");
  Result r = testing::RunForesight("preprocess --format criteo" + files + " --min-frequency 2 --quiet --output " +
                                   Quote(dir.File("vocab")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("8000 samples (1728 positive), train/val/test 7200/409/391"), std::string::npos) << r.out;
  nlohmann::json m = Manifest(dir.File("vocab"));
  EXPECT_EQ(m["kind"], "clicks");
  EXPECT_EQ(m["clicks"]["categorical"].size(), 26u);
  EXPECT_EQ(m["clicks"]["categorical"][0]["name"], "C1");
  EXPECT_GT(m["clicks"]["categorical"][0]["rows"].get<int64_t>(), 1);

  r = testing::RunForesight("preprocess --format criteo" + files + " --hash-buckets 1000 --quiet --output " +
                            Quote(dir.File("hash")));
  ASSERT_EQ(r.code, 0) << r.err;
  m = Manifest(dir.File("hash"));
  EXPECT_EQ(m["clicks"]["categorical"][25]["rows"], 1000);
  EXPECT_EQ(m["clicks"]["id_mode"], "hash");
}

TEST(ClicksCli, CsvUnknownColumnFailsAndLeavesNothing) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("a.csv"), "id,click,hour\n1,0,5\n");
  const Result r =
      testing::RunForesight("preprocess --format csv --input " + Quote(dir.File("a.csv")) +
                            " --columns id,click,hour --label clicked --drop id --output " + Quote(dir.File("out")));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("--label names column \"clicked\", which is not in --columns (id,click,hour)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(testing::PathExists(dir.File("out")));
  // A click-only flag on a graph format is a usage error.
  const Result g =
      testing::RunForesight("preprocess --format edgelist --edges x --hash-buckets 5 --output " + Quote(dir.File("g")));
  EXPECT_EQ(g.code, 2) << g.err;
  EXPECT_NE(g.err.find("are for --format criteo|csv"), std::string::npos) << g.err;
}

TEST(ClicksCli, GenerateClicksPrintsAndStoresTheTeacherAuc) {
  testing::TempDir dir;
  const Result r = testing::RunForesight(
      "generate clicks --tables 3 --rows 1000 --dim 4 --samples 20000 --bag-sizes 1,2,1 --zipf 1.1 --seed 5 "
      "--quiet --output " +
      Quote(dir.File("g")));
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t at = r.out.find("teacher test AUC ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const double printed = std::stod(r.out.substr(at + 17, 6));
  const nlohmann::json m = Manifest(dir.File("g"));
  EXPECT_NEAR(m["clicks"]["teacher"]["test_auc"].get<double>(), printed, 1e-4);
  EXPECT_EQ(m["clicks"]["categorical"][1]["bag_size"], 2);
}

}  // namespace
}  // namespace foresight
