// End-to-end `foresight plot` and `foresight cache-curve`: the charts are
// opened with real parsers (tests/apps/check_chart.py: xml.etree for SVG,
// a checked PNG decoder, rsvg-convert rendering where installed), the
// curve's numbers are held to what training itself reports, and bad input
// gets its file, line and what was expected.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

using testing::Quote;
using Result = testing::CliResult;

Result Foresight(const std::string& args) { return testing::RunForesight(args); }

// check_chart.py's report on `path`; fails the test when it does not parse.
nlohmann::json CheckChart(const std::string& path) {
  const std::string cmd = "/usr/bin/python3 " + Quote(std::string(FORESIGHT_SOURCE_DIR) +
                                                        "/tests/apps/check_chart.py") + " " + Quote(path) + " 2>&1";
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return nullptr;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  EXPECT_EQ(status, 0) << out;
  if (status != 0) return nullptr;
  return nlohmann::json::parse(out);
}

bool Has(const nlohmann::json& texts, const std::string& s) {
  return std::find(texts.begin(), texts.end(), s) != texts.end();
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::vector<nlohmann::json> JsonLines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

class PlotCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tmp_ = new testing::TempDir();
    ds_ = tmp_->File("g");
    const Result r = Foresight("generate graph --nodes 3000 --edges 30000 --features 16 --classes 4 --seed 3 "
                               "--quiet --threads 2 --output " + Quote(ds_));
    ASSERT_EQ(r.code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete tmp_;
    tmp_ = nullptr;
  }
  // Trains `epochs` epochs with `flags`, writing metrics to `name`.
  static std::string Train(const std::string& name, int epochs, const std::string& flags) {
    const std::string metrics = tmp_->File(name);
    const Result r = Foresight("train " + Quote(ds_) + " --epochs " + std::to_string(epochs) +
                               " --quiet --threads 2 --hidden 16 --metrics " + Quote(metrics) + " " + flags);
    EXPECT_EQ(r.code, 0) << r.err;
    return metrics;
  }
  static testing::TempDir* tmp_;
  static std::string ds_;
};
testing::TempDir* PlotCliTest::tmp_ = nullptr;
std::string PlotCliTest::ds_;

// Two GNN runs with a cache, overlaid: loss, accuracy (train/val/test a
// run), hit rate and bytes read; each line in the legend, one colour a run.
TEST_F(PlotCliTest, GnnRunsWithACacheAsSvg) {
  const std::string a = Train("lookahead.jsonl", 3, "--batch-size 256 --cache-size 64K");
  const std::string b = Train("lru.jsonl", 2, "--batch-size 256 --cache-size 32K --cache-policy lru");
  const std::string svg = tmp_->File("runs.svg");
  const Result r = Foresight("plot " + Quote(a) + " " + Quote(b) + " --output " + Quote(svg));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  ASSERT_EQ(report["panels"].size(), 4u) << r.out;
  const nlohmann::json chart = CheckChart(svg);
  ASSERT_FALSE(chart.is_null());
  const nlohmann::json& texts = chart["texts"];
  for (const char* title :
       {"training loss", "accuracy", "feature cache hit rate", "bytes read from the feature store"}) {
    EXPECT_TRUE(Has(texts, title)) << title << " in " << texts;
  }
  for (const char* label : {"lookahead train_acc", "lookahead val_acc", "lookahead test_acc", "lru train_acc",
                            "lru val_acc", "lru test_acc"}) {
    EXPECT_TRUE(Has(texts, label)) << label << " in " << texts;
  }
  // "lookahead" and "lru" alone: the legends of loss, hit rate and bytes.
  EXPECT_EQ(std::count(texts.begin(), texts.end(), "lookahead"), 3);
  EXPECT_EQ(std::count(texts.begin(), texts.end(), "lru"), 3);
  EXPECT_EQ(chart["line_colours"], (nlohmann::json{"#1F77B4", "#FF7F0E"}));
  if (chart["rendered"]) {
    EXPECT_GT(chart["render"]["width"].get<int>(), 1000);
  } else {
    std::printf("rsvg-convert not installed (Debian: librsvg2-bin): the SVG was parsed, not rendered\n");
  }
}

// A click-model run (AUC and log loss, no accuracy, no cache) and a run of
// loss only, as PNG: decoded, and each run's colour is drawn.
TEST_F(PlotCliTest, ClickMetricsAsPng) {
  const std::string click = tmp_->File("click.jsonl");
  Write(click,
        "{\"epoch\":1,\"loss\":0.52,\"val_auc\":0.71,\"val_logloss\":0.50,\"test_auc\":0.70,\"bytes_read\":0}\n"
        "{\"epoch\":2,\"loss\":0.47,\"val_auc\":0.75,\"val_logloss\":0.47,\"test_auc\":0.74,\"bytes_read\":0}\n"
        "{\"epoch\":3,\"loss\":null,\"val_auc\":0.76,\"val_logloss\":0.46,\"test_auc\":0.75,\"bytes_read\":0}\n"
        "{\"final\":true,\"best_epoch\":3}\n");
  const std::string other = tmp_->File("other.jsonl");
  Write(other, "{\"epoch\":1,\"loss\":0.60}\n\n{\"epoch\":2,\"loss\":0.55}\n");
  const std::string png = tmp_->File("click.png");
  const Result r = Foresight("plot " + Quote(click) + " " + Quote(other) + " --output " + Quote(png));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  ASSERT_EQ(report["panels"].size(), 3u) << r.out;
  EXPECT_EQ(report["panels"][0]["title"], "training loss");
  EXPECT_EQ(report["panels"][0]["lines"], (nlohmann::json{"click", "other"}));
  EXPECT_EQ(report["panels"][1]["title"], "AUC");
  EXPECT_EQ(report["panels"][1]["lines"], (nlohmann::json{"click val_auc", "click test_auc"}));
  EXPECT_EQ(report["panels"][2]["title"], "log loss");
  const nlohmann::json chart = CheckChart(png);
  ASSERT_FALSE(chart.is_null());
  EXPECT_EQ(chart["width"], 1400);
  EXPECT_EQ(chart["height"], 840);
  const nlohmann::json& colours = chart["colours"];
  EXPECT_GT(colours.value("#FFFFFF", 0), 1400 * 840 / 2);  // a white page
  EXPECT_GT(colours.value("#1F77B4", 0), 100);             // click's lines
  EXPECT_GT(colours.value("#FF7F0E", 0), 50);              // other's line
}

TEST_F(PlotCliTest, BadInput) {
  const std::string out = tmp_->File("bad.svg");
  Result r = Foresight("plot " + Quote(tmp_->File("missing.jsonl")) + " --output " + Quote(out));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("foresight plot: cannot read metrics file " + tmp_->File("missing.jsonl") +
                       ": No such file or directory"),
            std::string::npos)
      << r.err;
  r = Foresight("plot " + Quote(tmp_->path()) + " --output " + Quote(out));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(tmp_->path() + " is a directory, not a metrics file"), std::string::npos) << r.err;
  const std::string empty = tmp_->File("empty.jsonl");
  Write(empty, "");
  r = Foresight("plot " + Quote(empty) + " --output " + Quote(out));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(empty + ": no epoch lines"), std::string::npos) << r.err;
  const std::string broken = tmp_->File("broken.jsonl");
  Write(broken, "{\"epoch\":1,\"loss\":0.5}\n{\"epoch\":2,\"loss\":0.4\n");
  r = Foresight("plot " + Quote(broken) + " --output " + Quote(out));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(broken + ":2: expected a JSON object (one metrics line), got '{\"epoch\":2,\"loss\":0.4'"),
            std::string::npos)
      << r.err;
  Write(broken, "{\"epoch\":1,\"loss\":0.5}\n{\"loss\":0.4}\n");
  r = Foresight("plot " + Quote(broken) + " --output " + Quote(out));
  EXPECT_NE(r.err.find(broken + ":2: expected an integer \"epoch\""), std::string::npos) << r.err;
  Write(broken, "{\"epoch\":1,\"loss\":\"low\"}\n");
  r = Foresight("plot " + Quote(broken) + " --output " + Quote(out));
  EXPECT_NE(r.err.find(broken + ":1: expected a number for \"loss\", got \"low\""), std::string::npos) << r.err;
  Write(broken, "{\"epoch\":1,\"seconds\":3}\n");
  r = Foresight("plot " + Quote(broken) + " --output " + Quote(out));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("nothing to plot"), std::string::npos) << r.err;
  r = Foresight("plot " + Quote(empty) + " --output " + Quote(tmp_->File("chart.jpg")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--output " + tmp_->File("chart.jpg") + ": unknown extension '.jpg'; expected .svg or .png"),
            std::string::npos)
      << r.err;
  const std::string good = tmp_->File("good.jsonl");
  Write(good, "{\"epoch\":1,\"loss\":0.5}\n");
  r = Foresight("plot " + Quote(good) + " --output " + Quote(tmp_->File("no/such/dir.png")));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot write " + tmp_->File("no/such/dir.png") + ": No such file or directory"),
            std::string::npos)
      << r.err;
  r = Foresight("plot --output " + Quote(out));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("METRICS is required"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

// The curve replays exactly what training reads: for each policy at one
// size, epoch 1's cache_misses and bytes_read of a real run with the same
// flags equal the curve's misses and bytes_read.
TEST_F(PlotCliTest, CacheCurveMatchesTraining) {
  const std::string svg = tmp_->File("curve.svg");
  const Result r = Foresight("cache-curve " + Quote(ds_) +
                             " --batch-size 64 --threads 2 --sizes 1%,5%,20%,35%,100% --output " + Quote(svg));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<nlohmann::json> lines = JsonLines(r.out);
  ASSERT_EQ(lines.size(), 15u) << r.out;
  std::map<std::string, std::vector<nlohmann::json>> by_policy;
  for (const nlohmann::json& j : lines) by_policy[j["policy"]].push_back(j);
  ASSERT_EQ(by_policy.size(), 3u);
  for (size_t i = 0; i < 5; ++i) {
    // Belady within the window never misses more than LRU.
    EXPECT_LE(by_policy["lookahead"][i]["misses"], by_policy["lru"][i]["misses"]) << i;
  }
  // A cache of every row misses each distinct row once (cold start).
  EXPECT_EQ(by_policy["lookahead"][4]["misses"], by_policy["lookahead"][4]["distinct_rows"]);
  EXPECT_EQ(by_policy["lru"][4]["misses"], by_policy["lru"][4]["distinct_rows"]);
  for (const char* policy : {"lookahead", "lru", "static"}) {
    // 20% (600 rows, a few batches' worth: pinning and the window matter).
    const nlohmann::json& point = by_policy[policy][2];
    ASSERT_EQ(point["cache_rows"], 600);
    const std::string cache_bytes = std::to_string(point["cache_bytes"].get<int64_t>());
    const std::string metrics = Train(std::string(policy) + "-20.jsonl", 1,
                                      "--batch-size 64 --cache-size " + cache_bytes + " --cache-policy " + policy);
    std::ifstream in(metrics);
    std::string first;
    std::getline(in, first);
    const nlohmann::json epoch = nlohmann::json::parse(first);
    EXPECT_EQ(epoch["cache_misses"], point["misses"]) << policy;
    EXPECT_EQ(epoch["cache_hits"], point["hits"]) << policy;
    EXPECT_EQ(epoch["bytes_read"], point["bytes_read"]) << policy;
  }
  const nlohmann::json chart = CheckChart(svg);
  ASSERT_FALSE(chart.is_null());
  EXPECT_EQ(chart["line_colours"].size(), 3u);
  for (const char* label : {"lookahead", "lru", "static", "cache size (% of feature rows)",
                            "miss ratio (misses / rows requested)"}) {
    EXPECT_TRUE(Has(chart["texts"], label)) << label << " in " << chart["texts"];
  }
}

// The partition order with resident sampling: the same trace as training.
TEST_F(PlotCliTest, CacheCurveFollowsThePartitionOrder) {
  const std::string parted = tmp_->File("parted");
  Result r = Foresight("partition " + Quote(ds_) + " --parts 4 --method stream --quiet --threads 2 --output " +
                       Quote(parted));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string flags = "--batch-size 64 --threads 2 --order partition --sampling resident "
                            "--resident-partitions 2";
  r = Foresight("cache-curve " + Quote(parted) + " " + flags + " --sizes 20% --policies lru");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json point = nlohmann::json::parse(r.out);
  const std::string metrics = tmp_->File("parted.jsonl");
  r = Foresight("train " + Quote(parted) + " " + flags + " --epochs 1 --quiet --hidden 16 --cache-policy lru " +
                "--cache-size " + std::to_string(point["cache_bytes"].get<int64_t>()) + " --metrics " +
                Quote(metrics));
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(metrics);
  std::string first;
  std::getline(in, first);
  const nlohmann::json epoch = nlohmann::json::parse(first);
  EXPECT_EQ(epoch["rows_requested"], point["rows_requested"]);
  EXPECT_EQ(epoch["cache_misses"], point["misses"]);
  EXPECT_EQ(epoch["bytes_read"], point["bytes_read"]);
}

TEST_F(PlotCliTest, CacheCurveBadInput) {
  Result r = Foresight("cache-curve " + Quote(ds_) + " --sizes 0%");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--sizes: expected a percentage in (0%, 100%], got '0%'"), std::string::npos) << r.err;
  r = Foresight("cache-curve " + Quote(ds_) + " --sizes 10%,lots");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--sizes: expected a byte size such as 512M"), std::string::npos) << r.err;
  r = Foresight("cache-curve " + Quote(ds_) + " --policies lookahead,fifo");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("fifo"), std::string::npos) << r.err;
  r = Foresight("cache-curve " + Quote(ds_) + " --output curve.pdf");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown extension '.pdf'"), std::string::npos) << r.err;
  r = Foresight("cache-curve " + Quote(ds_) + " --order partition --threads 2");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--order partition needs --resident-partitions N here"), std::string::npos) << r.err;
  r = Foresight("cache-curve " + Quote(tmp_->File("nothing")) + " --threads 2");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(tmp_->File("nothing")), std::string::npos) << r.err;
}

TEST(PlotHelpTest, HelpNamesTheCommands) {
  Result r = Foresight("help plot");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--output"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("METRICS"), std::string::npos) << r.out;
  r = Foresight("help cache-curve");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--sizes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--lookahead"), std::string::npos) << r.out;
  r = Foresight("--help");
  EXPECT_NE(r.out.find("cache-curve"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plot"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace foresight
