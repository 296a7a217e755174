// The out-of-core options as `foresight train` flags and config keys.
#include <gtest/gtest.h>

#include "testing/testing.h"
#include "train_settings.h"

namespace foresight::apps {
namespace {

using foresight::testing::TempDir;

TEST(PipelineFlagsTest, FlagsSetTheOptions) {
  const std::vector<FlagValue> flags = {
      {"feature-store", ConfigValue::Text("disk")},   {"cache-policy", ConfigValue::Text("lru")},
      {"cache-size", ConfigValue::Text("512K")},      {"lookahead", ConfigValue::Text("12")},
      {"io-depth", ConfigValue::Text("32")},          {"memory-budget", ConfigValue::Text("1.5G")},
      {"order", ConfigValue::Text("partition")},      {"sampling", ConfigValue::Text("resident")},
      {"resident-partitions", ConfigValue::Text("3")}};
  ASSERT_OK_AND_ASSIGN(TrainOptions o, ResolveTrainOptions("", flags, "data"));
  EXPECT_EQ(o.feature_store, "disk");
  EXPECT_EQ(o.cache_policy, "lru");
  EXPECT_EQ(o.cache_size, 512 * 1024);
  EXPECT_EQ(o.lookahead, 12);
  EXPECT_EQ(o.io_depth, 32);
  EXPECT_EQ(o.memory_budget, int64_t{3} << 29);
  EXPECT_EQ(o.order, "partition");
  EXPECT_EQ(o.sampling, "resident");
  EXPECT_EQ(o.resident_partitions, 3);
  EXPECT_OK(o.Validate());
}

TEST(PipelineFlagsTest, DefaultsAndSpecialWords) {
  ASSERT_OK_AND_ASSIGN(TrainOptions d, ResolveTrainOptions("", {}, "data"));
  EXPECT_EQ(d.feature_store, "mmap");
  EXPECT_EQ(d.cache_policy, "lookahead");
  EXPECT_EQ(d.cache_size, -1);
  EXPECT_EQ(d.lookahead, -1);
  EXPECT_EQ(d.read_gap, -1);
  EXPECT_EQ(d.companion_span, -1);
  EXPECT_EQ(d.io_depth, 64);
  EXPECT_EQ(d.memory_budget, 0);
  EXPECT_EQ(FormatTrainValue(*FindTrainKey("cache-size"), d), "auto");
  EXPECT_EQ(FormatTrainValue(*FindTrainKey("lookahead"), d), "auto");
  EXPECT_EQ(FormatTrainValue(*FindTrainKey("read-gap"), d), "auto");
  EXPECT_EQ(FormatTrainValue(*FindTrainKey("companion-span"), d), "auto");
  EXPECT_EQ(FormatTrainValue(*FindTrainKey("memory-budget"), d), "none");
  ASSERT_OK_AND_ASSIGN(TrainOptions o, ResolveTrainOptions("", {{"cache-size", ConfigValue::Text("0")},
                                                                {"memory-budget", ConfigValue::Text("none")}},
                                                           "data"));
  EXPECT_EQ(o.cache_size, 0);
  EXPECT_EQ(o.memory_budget, 0);
  ASSERT_OK_AND_ASSIGN(o, ResolveTrainOptions("", {{"cache-size", ConfigValue::Text("auto")}}, "data"));
  EXPECT_EQ(o.cache_size, -1);
  // The read options take auto and concrete values alike.
  ASSERT_OK_AND_ASSIGN(o, ResolveTrainOptions("", {{"lookahead", ConfigValue::Text("16")},
                                                   {"read-gap", ConfigValue::Text("8K")},
                                                   {"companion-span", ConfigValue::Text("32K")}},
                                              "data"));
  EXPECT_EQ(o.lookahead, 16);
  EXPECT_EQ(o.read_gap, 8 << 10);
  EXPECT_EQ(o.companion_span, 32 << 10);
  ASSERT_OK_AND_ASSIGN(o, ResolveTrainOptions("", {{"lookahead", ConfigValue::Text("auto")},
                                                   {"read-gap", ConfigValue::Text("auto")}},
                                              "data"));
  EXPECT_EQ(o.lookahead, -1);
  EXPECT_EQ(o.read_gap, -1);
}

TEST(PipelineFlagsTest, BadValuesNameTheFlag) {
  EXPECT_ERROR_CONTAINS(ResolveTrainOptions("", {{"cache-size", ConfigValue::Text("12X")}}, "data"),
                        "--cache-size", "byte size", "'12X'");
  EXPECT_ERROR_CONTAINS(ResolveTrainOptions("", {{"memory-budget", ConfigValue::Text("auto")}}, "data"),
                        "--memory-budget", "'none'");
  EXPECT_ERROR_CONTAINS(ResolveTrainOptions("", {{"feature-store", ConfigValue::Text("ssd")}}, "data"),
                        "--feature-store", "memory|mmap|disk", "'ssd'");
  EXPECT_ERROR_CONTAINS(ResolveTrainOptions("", {{"order", ConfigValue::Text("bfs")}}, "data"), "--order",
                        "random|partition");
  EXPECT_ERROR_CONTAINS(ResolveTrainOptions("", {{"lookahead", ConfigValue::Text("many")}}, "data"),
                        "--lookahead", "an integer or 'auto'", "'many'");
}

TEST(PipelineFlagsTest, ConfigFileKeys) {
  TempDir dir;
  foresight::testing::WriteFile(dir.File("c.yaml"),
                                "feature_store: disk\ncache_size: 64M\nmemory_budget: 2147483648\n"
                                "cache_policy: static\nsampling: full\n");
  ASSERT_OK_AND_ASSIGN(TrainOptions o, ResolveTrainOptions(dir.File("c.yaml"), {}, "data"));
  EXPECT_EQ(o.feature_store, "disk");
  EXPECT_EQ(o.cache_size, int64_t{64} << 20);
  EXPECT_EQ(o.memory_budget, int64_t{2} << 30);
  EXPECT_EQ(o.cache_policy, "static");
  foresight::testing::WriteFile(dir.File("bad.toml"), "cache_size = \"lots\"\n");
  EXPECT_ERROR_CONTAINS(ResolveTrainOptions(dir.File("bad.toml"), {}, "data"), "bad.toml", "cache-size",
                        "byte size");
}

}  // namespace
}  // namespace foresight::apps
