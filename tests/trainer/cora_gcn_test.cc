// The accuracy bar for GCN on Cora (Kipf & Welling's setting: 2
// layers, 16 hidden, dropout 0.5, lr 0.01, weight decay 5e-4, 200 epochs,
// full graph): mean test accuracy over seeds 1..5 at least 0.805.
#include <gtest/gtest.h>

#include "citation_accuracy.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

TEST(CoraAccuracy, GcnReachesThePaperAccuracy) {
  foresight::testing::TempDir dir;
  ASSERT_OK(foresight::testing::PrepareCitation("cora", dir.File("cora")));
  TrainOptions o;
  o.dataset = dir.File("cora");
  o.model = "gcn";
  o.full_graph = true;
  o.hidden = 16;
  o.layers = 2;
  o.dropout = 0.5f;
  o.lr = 0.01f;
  o.weight_decay = 5e-4f;
  o.epochs = 200;
  o.progress = false;
  ASSERT_OK_AND_ASSIGN(double acc, foresight::testing::MeanTestAccuracy(o));
  EXPECT_GE(acc, 0.805);
}

}  // namespace
}  // namespace foresight::trainer
