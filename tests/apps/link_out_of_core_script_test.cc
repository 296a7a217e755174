// bench/link_out_of_core.sh at a tiny size: every step prints its JSON
// line, the disk runs stay within their budget (+10%), and the per-step
// losses of disk and memory at 1 and 2 threads are the same.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
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
  const testing::CliResult r =
      testing::RunBenchScript("BUDGET=400M DIM=16 P=8 C=3 BATCH=1000 NEGATIVES=16 CHUNK=250 LOOKAHEAD=4 EPOCHS=2", "link_out_of_core.sh", Quote(work) + " 100000 20000");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<nlohmann::json> lines = testing::ParseJsonLines(r.out);
  for (const nlohmann::json& j : lines) ASSERT_TRUE(j.is_object()) << "a line is not a JSON object:\n" << r.out;
  const std::vector<std::string> steps = {"generate", "disk1", "disk2", "memory1", "memory2", "compare"};
  ASSERT_EQ(lines.size(), steps.size()) << r.out;
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
