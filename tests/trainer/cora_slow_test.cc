// The accuracy bars for GAT and GraphSAGE on Cora (mean test
// accuracy over seeds 1..5). Labelled slow: minutes on two cores.
#include <gtest/gtest.h>

#include "citation_accuracy.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

class CoraSlowTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new foresight::testing::TempDir();
    const Status s = foresight::testing::PrepareCitation("cora", dir_->File("cora"));
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static TrainOptions Options(const std::string& model) {
    TrainOptions o;
    o.dataset = dir_->File("cora");
    o.model = model;
    o.progress = false;
    return o;
  }
  static foresight::testing::TempDir* dir_;
};
foresight::testing::TempDir* CoraSlowTest::dir_ = nullptr;

// Velickovic et al.: 8 heads of 8 hidden units, ELU, one output head,
// dropout 0.6 on inputs and attention, lr 0.005, weight decay 5e-4.
TEST_F(CoraSlowTest, GatReachesThePaperAccuracy) {
  TrainOptions o = Options("gat");
  o.full_graph = true;
  o.hidden = 8;
  o.heads = 8;
  o.dropout = 0.6f;
  o.lr = 0.005f;
  o.epochs = 300;
  ASSERT_OK_AND_ASSIGN(double acc, foresight::testing::MeanTestAccuracy(o));
  EXPECT_GE(acc, 0.815);
}

TEST_F(CoraSlowTest, SageFullGraph) {
  TrainOptions o = Options("sage");
  o.full_graph = true;
  o.hidden = 64;
  o.dropout = 0.5f;
  o.lr = 0.01f;
  ASSERT_OK_AND_ASSIGN(double acc, foresight::testing::MeanTestAccuracy(o));
  EXPECT_GE(acc, 0.79);
}

// Mini-batch GraphSAGE with the default fanouts 15,10 and batch size 1024
// (Cora's 140 training ids make one batch per epoch).
TEST_F(CoraSlowTest, SageMiniBatch) {
  TrainOptions o = Options("sage");
  o.hidden = 64;
  o.dropout = 0.5f;
  o.lr = 0.01f;
  ASSERT_OK_AND_ASSIGN(double acc, foresight::testing::MeanTestAccuracy(o));
  EXPECT_GE(acc, 0.79);
}

}  // namespace
}  // namespace foresight::trainer
