// bench/billion_edges.sh at a tiny size: every step (generate with a text
// edge list, preprocess, partition, train) prints its JSON line with the
// fields the billion-edge report needs, within the budget, and the trained
// model beats chance on the planted classes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

using testing::Quote;

TEST(BillionEdgesScriptTest, PrintsOneJsonLinePerStepWithinTheBudget) {
  testing::TempDir dir;
  const std::string work = dir.File("work");
  const testing::CliResult r =
      testing::RunBenchScript("BUDGET=1G THREADS=2 EVAL_FRAC=0.1 BATCH=32", "billion_edges.sh", Quote(work) + " 100000");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<nlohmann::json> lines = testing::ParseJsonLines(r.out);
  for (const nlohmann::json& j : lines) ASSERT_TRUE(j.is_object()) << "a line is not a JSON object:\n" << r.out;
  const std::vector<std::string> steps = {"generate", "preprocess", "partition", "train"};
  ASSERT_EQ(lines.size(), steps.size()) << r.out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const nlohmann::json& j = lines[i];
    SCOPED_TRACE(j.dump());
    EXPECT_EQ(j.value("step", ""), steps[i]);
    ASSERT_TRUE(j.contains("seconds") && j["seconds"].is_number());
    EXPECT_GE(j["seconds"].get<double>(), 0.0);
    EXPECT_EQ(j.value("budget_bytes", int64_t{0}), int64_t{1} << 30);
    EXPECT_GT(j.value("peak_rss_bytes", int64_t{0}), 0);
    EXPECT_LE(j.value("peak_rss_bytes", int64_t{0}), j.value("budget_bytes", int64_t{0}));
    EXPECT_GT(j.value("disk_bytes", int64_t{0}), 0);
  }
  EXPECT_EQ(lines[0].value("edges", int64_t{0}), 100000);
  const nlohmann::json& train = lines.back();
  ASSERT_TRUE(train.contains("test_acc")) << train.dump();
  // 16 planted classes: chance is 1/16.
  EXPECT_GT(train["test_acc"].get<double>(), 2.0 / 16) << train.dump();
  EXPECT_GT(train.value("seeds", int64_t{0}), 0);
  // The text edge list is the preprocessed input and stays for reruns.
  EXPECT_TRUE(testing::PathExists(work + "/edges.txt.gz"));
  EXPECT_FALSE(testing::PathExists(work + "/tmp")) << "the spill folder is removed at the end";
}

}  // namespace
}  // namespace foresight
