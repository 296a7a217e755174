// End-to-end `foresight partition`: the JSON report, exit codes and
// messages, and a real write failure (RLIMIT_FSIZE in the child, SIGXFSZ
// ignored so the write returns EFBIG) that must leave the dataset intact.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

using testing::DirContents;
using testing::Entries;
using testing::Quote;
using Result = testing::CliResult;

// Runs `<prefix> foresight <args>` through sh.
Result Foresight(const std::string& args, const std::string& prefix = "") {
  return testing::RunForesight(args, prefix);
}

class PartitionCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ds_ = tmp_.File("g");
    const Result r = Foresight("generate graph --nodes 2000 --edges 20000 --features 16 --classes 4 --seed 3 --quiet "
                         "--threads 2 --output " + Quote(ds_));
    ASSERT_EQ(r.code, 0) << r.err;
  }
  testing::TempDir tmp_;
  std::string ds_;
};

TEST_F(PartitionCliTest, PrintsTheReportAndWritesTheDataset) {
  const std::string out = tmp_.File("out");
  const Result r = Foresight("partition " + Quote(ds_) + " --parts 4 --method stream --quiet --output " + Quote(out));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "stream");
  EXPECT_EQ(j["parts"], 4);
  EXPECT_EQ(j["dataset"], out);
  ASSERT_EQ(j["offsets"].size(), 5u);
  EXPECT_EQ(j["offsets"][4], 2000);
  EXPECT_GT(j["edge_cut"].get<int64_t>(), 0);
  EXPECT_LT(j["cut_fraction"].get<double>(), 0.75);
  EXPECT_LE(j["balance"].get<double>(), 1.05);
  EXPECT_GT(j["peak_rss_bytes"].get<int64_t>(), 0);
  const nlohmann::json m = nlohmann::json::parse(testing::ReadFile(out + "/manifest.json"));
  EXPECT_EQ(m["partitions"]["offsets"], j["offsets"]);
  EXPECT_EQ(m["partitions"]["edge_cut"], j["edge_cut"]);
  EXPECT_EQ(m["id_map"], "int");
  // In place, with METIS.
  const Result r2 = Foresight("partition " + Quote(ds_) + " --parts 2 --method metis --seed 5 --quiet");
  ASSERT_EQ(r2.code, 0) << r2.err;
  EXPECT_EQ(nlohmann::json::parse(r2.out)["dataset"], ds_);
  const nlohmann::json m2 = nlohmann::json::parse(testing::ReadFile(ds_ + "/manifest.json"));
  EXPECT_EQ(m2["partitions"]["method"], "metis");
  EXPECT_EQ(m2["partitions"]["node_order"], "none");
  // A node order inside the partitions: reported and stored.
  const Result r3 = Foresight("partition " + Quote(out) + " --parts 4 --method stream --node-order bfs --quiet");
  ASSERT_EQ(r3.code, 0) << r3.err;
  EXPECT_EQ(nlohmann::json::parse(r3.out)["node_order"], "bfs");
  EXPECT_EQ(nlohmann::json::parse(testing::ReadFile(out + "/manifest.json"))["partitions"]["node_order"], "bfs");
  EXPECT_EQ(Entries(tmp_.path()), (std::vector<std::string>{"g", "out"}));
}

TEST_F(PartitionCliTest, ErrorsAndExitCodes) {
  Result r = Foresight("partition " + Quote(tmp_.File("missing")) + " --parts 2");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("foresight partition: dataset " + tmp_.File("missing") + " does not exist"),
            std::string::npos)
      << r.err;
  r = Foresight("partition " + Quote(ds_) + " --parts 0");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--parts must be >= 1, got 0"), std::string::npos) << r.err;
  r = Foresight("partition " + Quote(ds_) + " --parts 2001 --method stream");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--parts 2001 is more than the 2000 nodes"), std::string::npos) << r.err;
  r = Foresight("partition " + Quote(ds_) + " --parts 2 --method spectral");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--method must be metis or stream, got \"spectral\""), std::string::npos) << r.err;
  r = Foresight("partition " + Quote(ds_) + " --parts 2 --node-order rcm");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--node-order must be none, degree or bfs, got \"rcm\""), std::string::npos) << r.err;
  r = Foresight("partition " + Quote(ds_) + " --parts 2 --method metis --memory-budget 1M");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("metis needs an estimated"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use --method stream"), std::string::npos) << r.err;
  EXPECT_EQ(Entries(tmp_.path()), std::vector<std::string>{"g"});
}

// The process may write only 100 KiB per file: the features file cannot be
// written, the run fails cleanly, and the dataset is byte-identical.
TEST_F(PartitionCliTest, WriteFailureLeavesTheDatasetIntact) {
  const auto before = DirContents(ds_);
  const Result r = Foresight("partition " + Quote(ds_) + " --parts 4 --method stream --quiet",
                       "trap '' XFSZ; ulimit -f 200; exec ");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("foresight partition: write "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_TRUE(DirContents(ds_) == before);
  EXPECT_EQ(Entries(tmp_.path()), std::vector<std::string>{"g"});
}

}  // namespace
}  // namespace foresight
