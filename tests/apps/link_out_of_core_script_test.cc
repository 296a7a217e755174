// bench/link_out_of_core.sh at a tiny size: every step prints its JSON
// line, the disk runs stay within their budget (+10%), and the per-step
// losses of disk and memory at 1 and 2 threads are the same.
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

TEST(LinkOutOfCoreScriptTest, PrintsOneJsonLinePerStepAndTheSameLosses) {
  testing::TempDir dir;
  const std::string work = dir.File("work");
  const std::string cmd = "FORESIGHT=" + Quote(testing::BinaryDir() + "/foresight") +
                          " BUDGET=400M DIM=16 P=8 C=3 BATCH=1000 NEGATIVES=16 CHUNK=250 LOOKAHEAD=4 EPOCHS=2 bash " +
                          Quote(testing::SourceDir() + "/bench/link_out_of_core.sh") + " " + Quote(work) +
                          " 100000 20000 2>" + Quote(dir.File("stderr"));
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
  const std::vector<std::string> steps = {"generate", "disk1", "disk2", "memory1", "memory2", "compare"};
  ASSERT_EQ(lines.size(), steps.size()) << out;
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(lines[i].value("step", ""), steps[i]) << lines[i].dump();
  for (size_t i : {1, 2}) {
    const nlohmann::json& j = lines[i];
    SCOPED_TRACE(j.dump());
    EXPECT_EQ(j.value("budget_bytes", int64_t{0}), int64_t{400} << 20);
    EXPECT_GT(j.value("peak_rss_bytes", int64_t{0}), 0);
    EXPECT_LE(j.value("peak_rss_bytes", int64_t{0}), j.value("budget_bytes", int64_t{0}) * 11 / 10);
    ASSERT_TRUE(j.contains("epoch_seconds") && j["epoch_seconds"].size() == 2);
    EXPECT_GT(j["cache_misses"][0].get<int64_t>(), 0);
  }
  const nlohmann::json& compare = lines.back();
  EXPECT_EQ(compare.value("same_losses", false), true) << compare.dump();
  EXPECT_GT(compare.value("steps", 0), 2);
  EXPECT_NE(compare.value("partition_loads", "").find("partition loads per epoch (lower bound"), std::string::npos)
      << compare.dump();
  EXPECT_NE(testing::ReadFile(work + "/plan.txt").find("smallest --memory-budget this run accepts"),
            std::string::npos);
}

}  // namespace
}  // namespace foresight
