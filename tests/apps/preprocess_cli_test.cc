// `foresight preprocess` on files as published (issue 18): MUSAE-style
// Facebook and GitHub CSVs (edge header, wide target tables, quoted names,
// class names) preprocess with flags alone, the class names reach `export`,
// and empty or inconsistent input exits 1 naming the file and the line.
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <string>

#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

using testing::Quote;
using Result = testing::CliResult;

Result Foresight(const std::string& args) { return testing::RunForesight(args); }

constexpr const char* kPageTypes[] = {"company", "government", "politician", "tvshow"};

// A 40-page MUSAE-Facebook-like graph: pages of one type form a ring, with
// a few links across types; names hold quoted commas and quotes.
class MusaeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string edges = "id_1,id_2\n", target = "id,facebook_id,page_name,page_type\n";
    std::string git = "id,name,ml_target\n", features;
    for (int i = 0; i < 40; ++i) {
      edges += std::to_string(i) + "," + std::to_string((i + 4) % 40) + "\n";
      if (i % 10 == 0) edges += std::to_string(i) + "," + std::to_string(i + 1) + "\n";
      target += std::to_string(i) + "," + std::to_string(1000000 + i) + ",\"Page " + std::to_string(i) +
                ", \"\"the\"\" page\"," + kPageTypes[i % 4] + "\n";
      git += std::to_string(i) + ",user" + std::to_string(i) + "," + std::to_string(i % 4 == 0 ? 1 : 0) + "\n";
      for (int k = 0; k < 4; ++k) features += std::string(k ? "," : "") + (k == i % 4 ? "1" : "0");
      features += "\n";
    }
    edges_ = dir_.File("musae_facebook_edges.csv");
    target_ = dir_.File("musae_facebook_target.csv");
    git_ = dir_.File("musae_git_target.csv");
    features_ = dir_.File("features.csv");
    testing::WriteFile(edges_, edges);
    testing::WriteFile(target_, target);
    testing::WriteFile(git_, git);
    testing::WriteFile(features_, features);
  }

  testing::TempDir dir_;
  std::string edges_, target_, git_, features_;
};

TEST_F(MusaeCliTest, FacebookPreprocessesTrainsAndExportsClassNames) {
  const std::string data = dir_.File("facebook");
  const Result p = Foresight("preprocess --edges " + Quote(edges_) + " --labels " + Quote(target_) +
                             " --label-column page_type --features " + Quote(features_) +
                             " --undirected --quiet --output " + Quote(data));
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("40 nodes"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("4 classes"), std::string::npos) << p.out;
  // The header decisions are in the log, with the line and the override.
  EXPECT_NE(p.err.find("musae_facebook_edges.csv:1: skipped header line 'id_1,id_2'"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("--no-header"), std::string::npos) << p.err;

  const std::string ckpt = dir_.File("ckpt");
  const Result t = Foresight("train " + Quote(data) +
                             " --model gcn --full-graph --epochs 2 --hidden 8 --seed 1 --threads 2 --checkpoint " +
                             Quote(ckpt));
  ASSERT_EQ(t.code, 0) << t.err;
  const std::string out = dir_.File("export");
  const Result ex = Foresight("export " + Quote(data) + " --checkpoint " + Quote(ckpt) + " --output " + Quote(out));
  ASSERT_EQ(ex.code, 0) << ex.err;
  const nlohmann::json names = nlohmann::json::parse(testing::ReadFile(out + "/class_names.json"));
  EXPECT_EQ(names, nlohmann::json({"company", "government", "politician", "tvshow"}));
}

TEST_F(MusaeCliTest, GithubPreprocessesWithFlagsAlone) {
  const Result p = Foresight("preprocess --edges " + Quote(edges_) + " --labels " + Quote(git_) +
                             " --label-column ml_target --undirected --quiet --output " + Quote(dir_.File("git")));
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_NE(p.out.find("40 nodes"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("2 classes"), std::string::npos) << p.out;
}

TEST_F(MusaeCliTest, WideLabelFileWithoutLabelColumnNamesTheColumns) {
  const Result p = Foresight("preprocess --edges " + Quote(edges_) + " --labels " + Quote(target_) +
                             " --quiet --output " + Quote(dir_.File("x")));
  EXPECT_EQ(p.code, 1);
  EXPECT_NE(p.err.find("musae_facebook_target.csv:2: 4 columns ('id', 'facebook_id', 'page_name', 'page_type')"),
            std::string::npos)
      << p.err;
  EXPECT_FALSE(testing::PathExists(dir_.File("x")));
  const Result n = Foresight("preprocess --edges " + Quote(edges_) + " --no-header --quiet --output " +
                             Quote(dir_.File("y")));
  EXPECT_EQ(n.code, 1);
  EXPECT_NE(n.err.find("musae_facebook_edges.csv:1: node id 'id_1' is not an integer"), std::string::npos) << n.err;
  const Result both = Foresight("preprocess --edges " + Quote(edges_) + " --header --no-header --output " +
                                Quote(dir_.File("z")));
  EXPECT_NE(both.code, 0);
}

TEST_F(MusaeCliTest, EmptyAndInconsistentInputExitsOne) {
  const std::string empty = dir_.File("empty.csv");
  testing::WriteFile(empty, "id_1,id_2\n");
  Result r = Foresight("preprocess --edges " + Quote(empty) + " --quiet --output " + Quote(dir_.File("a")));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("empty.csv: no edges"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow-empty-edges"), std::string::npos) << r.err;

  const std::string labels = dir_.File("labels.csv");
  testing::WriteFile(labels, "id,page_type\n0,tvshow\n57,company\n");
  r = Foresight("preprocess --edges " + Quote(edges_) + " --labels " + Quote(labels) + " --quiet --output " +
                Quote(dir_.File("b")));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("labels.csv:3: node 57 has a label but no edge names it"), std::string::npos) << r.err;
  r = Foresight("preprocess --edges " + Quote(edges_) + " --labels " + Quote(labels) +
                " --allow-isolated-nodes --quiet --output " + Quote(dir_.File("b")));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("58 nodes"), std::string::npos) << r.out;
}

TEST(PreprocessHelp, ListsTheInputFlags) {
  const Result h = Foresight("help preprocess");
  ASSERT_EQ(h.code, 0) << h.err;
  for (const char* flag : {"--label-column", "--id-column", "--class-names", "--header", "--no-header",
                           "--allow-empty-edges", "--allow-isolated-nodes"}) {
    EXPECT_NE(h.out.find(flag), std::string::npos) << flag << "\n" << h.out;
  }
}

}  // namespace
}  // namespace foresight
