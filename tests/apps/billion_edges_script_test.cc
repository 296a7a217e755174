// bench/billion_edges.sh at a tiny size: every step (generate with a text
// edge list, preprocess, partition, train) prints its JSON line with the
// fields the billion-edge report needs, within the budget, and the trained
// model beats chance on the planted classes.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
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
  const std::string cmd = "FORESIGHT=" + Quote(testing::BinaryDir() + "/foresight") +
                          " BUDGET=1G THREADS=2 EVAL_FRAC=0.1 BATCH=32 bash " +
                          Quote(testing::SourceDir() + "/bench/billion_edges.sh") + " " + Quote(work) +
                          " 100000 2>" + Quote(dir.File("stderr"));
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  ASSERT_EQ(::pclose(p), 0) << out << testing::ReadFile(dir.File("stderr"));

  std::vector<nlohmann::json> lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << "not a JSON object: " << line;
    lines.push_back(j);
  }
  const std::vector<std::string> steps = {"generate", "preprocess", "partition", "train"};
  ASSERT_EQ(lines.size(), steps.size()) << out;
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
