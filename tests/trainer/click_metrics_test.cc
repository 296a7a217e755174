// AUC (exact, ties at their mean rank), logloss and accuracy of click
// predictions, against values worked out by hand.
#include "click_metrics.h"

#include <cmath>

#include "testing/testing.h"

namespace foresight::trainer::internal {
namespace {

TEST(ClickMetricsTest, AucCountsTiesAsHalf) {
  // Positives at 0.9 and 0.5, negatives at 0.5 and 0.1: of the 4 pairs, 3
  // are ordered right and one is tied (half): AUC = 3.5 / 4.
  auto m = ComputeClickMetrics({0.9f, 0.5f, 0.5f, 0.1f}, {1, 1, 0, 0});
  ASSERT_OK(m.status());
  EXPECT_DOUBLE_EQ(m->auc, 0.875);
  // Every score tied: 0.5 whatever the labels.
  m = ComputeClickMetrics({2, 2, 2, 2, 2}, {1, 0, 0, 1, 0});
  ASSERT_OK(m.status());
  EXPECT_DOUBLE_EQ(m->auc, 0.5);
  m = ComputeClickMetrics({3, 2, 1}, {1, 1, 0});
  EXPECT_DOUBLE_EQ(m->auc, 1.0);
  m = ComputeClickMetrics({1, 2, 3}, {1, 1, 0});
  EXPECT_DOUBLE_EQ(m->auc, 0.0);
  // One class only: no ranking to judge.
  m = ComputeClickMetrics({1, 2}, {0, 0});
  EXPECT_DOUBLE_EQ(m->auc, 0.5);
}

TEST(ClickMetricsTest, LoglossAndAccuracy) {
  auto m = ComputeClickMetrics({0.0f, 2.0f, -40.0f}, {1, 0, 0});
  ASSERT_OK(m.status());
  const double want = (std::log(2.0) + std::log1p(std::exp(2.0)) + std::log1p(std::exp(-40.0))) / 3;
  EXPECT_NEAR(m->logloss, want, 1e-12);
  EXPECT_NEAR(m->accuracy, 1.0 / 3, 1e-12);  // logit 0 predicts 0; 2 predicts 1; -40 predicts 0
  EXPECT_EQ(m->count, 3);
}

TEST(ClickMetricsTest, RefusesBadLabels) {
  EXPECT_FALSE(ComputeClickMetrics({1, 2}, {0, 2}).ok());
  EXPECT_FALSE(ComputeClickMetrics({1, 2}, {0}).ok());
}

}  // namespace
}  // namespace foresight::trainer::internal
