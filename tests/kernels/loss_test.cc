#include <cmath>
#include <vector>

#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

using test::RandomF32;
using test::ToDouble;
using test::ToVec;

TEST(LossTest, LogSoftmaxMatchesReference) {
  test::TwoPools pools;
  const int64_t n = 3000, c = 7;
  Tensor x = RandomF32({n, c}, 1, -5.0f, 5.0f);
  Tensor y1 = Tensor::Empty({n, c}, DType::kF32), y3 = Tensor::Empty({n, c}, DType::kF32);
  ASSERT_OK(LogSoftmax(pools.ctx1, x, &y1));
  ASSERT_OK(LogSoftmax(pools.ctx3, x, &y3));
  EXPECT_TRUE(test::BitwiseEqual(y1, y3));
  test::ExpectClose(ToVec(y1), reference::LogSoftmax<double>(ToDouble(x), n, c), 1e-5, 1e-5, "LogSoftmax");
}

// Gradient of NllLoss(LogSoftmax(x)) through both backwards, against
// central differences of the double-precision forward. Some labels are -1
// (ignored).
TEST(LossTest, LogSoftmaxNllLossGradient) {
  auto ctx = CpuContext();
  const int64_t n = 9, c = 5;
  Tensor x = RandomF32({n, c}, 2, -3.0f, 3.0f);
  const std::vector<int64_t> labels = {0, 4, -1, 2, 2, 1, -1, 3, 0};
  Tensor lab = test::IdsTensor(labels, DType::kI32);
  Tensor logp = Tensor::Empty({n, c}, DType::kF32), g = Tensor::Empty({n, c}, DType::kF32);
  Tensor gx = Tensor::Empty({n, c}, DType::kF32);
  ASSERT_OK(LogSoftmax(ctx, x, &logp));
  float loss = 0;
  ASSERT_OK(NllLoss(ctx, logp, lab, &loss, &g));
  ASSERT_OK(LogSoftmaxBackward(ctx, logp, g, &gx));
  const double want = reference::NllLoss<double>(reference::LogSoftmax<double>(ToDouble(x), n, c), labels, c);
  EXPECT_NEAR(loss, want, 1e-5);
  auto f = [&](const std::vector<double>& xv) {
    return reference::NllLoss<double>(reference::LogSoftmax<double>(xv, n, c), labels, c);
  };
  std::vector<size_t> checked;
  const auto num = test::NumericGrad(f, ToDouble(x), 1e-4, 1, &checked);
  test::ExpectGradClose(ToVec(gx), num, checked, 1e-3, 1e-5, "d loss / d logits");
  // Ignored rows get no gradient.
  for (int64_t j = 0; j < c; ++j) EXPECT_EQ(ToVec(gx)[2 * c + j], 0.0f);
}

TEST(LossTest, NllLossIsDeterministicAndHandlesNoLabels) {
  test::TwoPools pools;
  const int64_t n = 5000, c = 10;
  Tensor logp = RandomF32({n, c}, 3, -4.0f, 0.0f);
  std::vector<int64_t> labels(n);
  for (int64_t i = 0; i < n; ++i) labels[i] = (i * 7) % 11 - 1;  // -1..9
  Tensor lab = test::IdsTensor(labels, DType::kI64);
  float l1 = 0, l3 = 0;
  ASSERT_OK(NllLoss(pools.ctx1, logp, lab, &l1, nullptr));
  ASSERT_OK(NllLoss(pools.ctx3, logp, lab, &l3, nullptr));
  EXPECT_EQ(l1, l3);
  EXPECT_NEAR(l1, reference::NllLoss<double>(ToDouble(logp), labels, c), 1e-5);
  Tensor none = test::IdsTensor(std::vector<int64_t>(n, -1), DType::kI64);
  ASSERT_OK(NllLoss(pools.ctx1, logp, none, &l1, nullptr));
  EXPECT_EQ(l1, 0.0f);
}

TEST(LossTest, AccuracyFirstMaxWins) {
  auto ctx = CpuContext();
  Tensor s = Tensor::Empty({4, 3}, DType::kF32);
  const float v[] = {1, 3, 3,  // tie: class 1 wins
                     5, 0, 0,  //
                     0, 0, 2,  //
                     9, 9, 9};
  std::copy(v, v + 12, s.data<float>());
  Tensor lab = test::IdsTensor({1, 1, 2, -1}, DType::kI32);
  int64_t correct = -1, counted = -1;
  ASSERT_OK(Accuracy(ctx, s, lab, &correct, &counted));
  EXPECT_EQ(correct, 2);
  EXPECT_EQ(counted, 3);
  Tensor lab2 = test::IdsTensor({2, 1, 2, -1}, DType::kI32);
  ASSERT_OK(Accuracy(ctx, s, lab2, &correct, &counted));
  EXPECT_EQ(correct, 1);
}

TEST(LossTest, ErrorsNameTheRow) {
  auto ctx = CpuContext();
  Tensor logp = RandomF32({3, 4}, 1);
  float loss;
  EXPECT_ERROR_CONTAINS(NllLoss(ctx, logp, test::IdsTensor({0, 4, 1}, DType::kI64), &loss, nullptr),
                        "NllLoss: labels[1] = 4", "4 classes");
  int64_t a, b;
  EXPECT_ERROR_CONTAINS(Accuracy(ctx, logp, test::IdsTensor({0, 1, 9}, DType::kI32), &a, &b),
                        "Accuracy: labels[2] = 9");
  EXPECT_ERROR_CONTAINS(NllLoss(ctx, logp, test::IdsTensor({0, 1}, DType::kI64), &loss, nullptr),
                        "NllLoss: labels", "expected 3 labels");
  Tensor flab = Tensor::Zeros({3}, DType::kF32);
  EXPECT_ERROR_CONTAINS(NllLoss(ctx, logp, flab, &loss, nullptr), "NllLoss: labels", "i32 or i64", "f32");
  Tensor bad = Tensor::Empty({3, 5}, DType::kF32);
  EXPECT_ERROR_CONTAINS(LogSoftmax(ctx, logp, &bad), "LogSoftmax: out", "[3, 4]", "[3, 5]");
}

}  // namespace
}  // namespace foresight::kernels
