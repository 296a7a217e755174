// The Cora commands carried unchanged to the other Planetoid
// citation graphs bundled in datasets/ (CiteSeer, PubMed): the same
// preprocessing and the same GCN / GAT / GraphSAGE flags, mean test
// accuracy over seeds 1..5. Bars are the papers' figures less 1.5 points
// where a paper ran that setting (GCN: Kipf & Welling 2017, CiteSeer 70.3,
// PubMed 79.0, the same hyperparameters on all three graphs; GAT:
// Velickovic et al. 2018, CiteSeer 72.5 with Cora's settings). Where no
// paper ran the setting (GAT on PubMed used other settings there; GraphSAGE
// was not evaluated on these splits) the bar is about one point under our
// own mean, as a regression check. Runs are deterministic, so a bar is
// either met or not. bench/RESULTS.md has the per-seed figures. Labelled
// slow: minutes on two cores.
#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <string>

#include "citation_accuracy.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

bool Exists(const std::string& path) { return std::filesystem::exists(path); }

class CitationSlowTest : public ::testing::Test {
 protected:
  // Each test runs in its own process (gtest discovery), so a test
  // prepares only the graph it trains on.
  static void SetUpTestSuite() { dir_ = new foresight::testing::TempDir(); }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // The README's flags for `model`, as the Cora tests use them.
  static TrainOptions Options(const std::string& dataset, const std::string& model) {
    if (!Exists(dir_->File(dataset))) {
      const Status s = foresight::testing::PrepareCitation(dataset, dir_->File(dataset));
      EXPECT_TRUE(s.ok()) << dataset << ": " << s.ToString();
    }
    TrainOptions o;
    o.dataset = dir_->File(dataset);
    o.model = model;
    o.full_graph = true;
    o.layers = 2;
    o.weight_decay = 5e-4f;
    o.progress = false;
    if (model == "gcn") {
      o.hidden = 16;
      o.dropout = 0.5f;
      o.lr = 0.01f;
      o.epochs = 200;
    } else if (model == "gat") {
      o.hidden = 8;
      o.heads = 8;
      o.dropout = 0.6f;
      o.lr = 0.005f;
      o.epochs = 300;
    } else {
      o.hidden = 64;
      o.dropout = 0.5f;
      o.lr = 0.01f;
      o.epochs = 200;
    }
    return o;
  }
  static foresight::testing::TempDir* dir_;
};
foresight::testing::TempDir* CitationSlowTest::dir_ = nullptr;

struct Bar {
  const char* dataset;
  const char* model;
  double min_mean_test_acc;
};

// How gtest (and so ctest's test list) shows a Bar, instead of its bytes.
void PrintTo(const Bar& b, std::ostream* os) {
  *os << b.dataset << " " << b.model << " >= " << b.min_mean_test_acc;
}

class CitationBarTest : public CitationSlowTest, public ::testing::WithParamInterface<Bar> {};

TEST_P(CitationBarTest, MeanTestAccuracyReachesTheBar) {
  const Bar& b = GetParam();
  ASSERT_OK_AND_ASSIGN(double acc, foresight::testing::MeanTestAccuracy(Options(b.dataset, b.model)));
  EXPECT_GE(acc, b.min_mean_test_acc) << b.dataset << " " << b.model;
}

INSTANTIATE_TEST_SUITE_P(Graphs, CitationBarTest,
                         ::testing::Values(Bar{"citeseer", "gcn", 0.688}, Bar{"citeseer", "gat", 0.710},
                                           Bar{"citeseer", "sage", 0.690}, Bar{"pubmed", "gcn", 0.775},
                                           Bar{"pubmed", "gat", 0.765}, Bar{"pubmed", "sage", 0.760}),
                         [](const ::testing::TestParamInfo<Bar>& i) {
                           return std::string(i.param.dataset) + "_" + i.param.model;
                         });

}  // namespace
}  // namespace foresight::trainer
