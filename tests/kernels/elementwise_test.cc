#include <vector>

#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

using test::RandomF32;
using test::ToVec;

TEST(ElementwiseTest, BinaryAndScaleMatchLoops) {
  auto ctx = CpuContext();
  const Shape shape{123, 457};  // several chunks and a ragged tail
  Tensor a = RandomF32(shape, 1), b = RandomF32(shape, 2);
  Tensor out = Tensor::Empty(shape, DType::kF32);
  const auto va = ToVec(a), vb = ToVec(b);

  ASSERT_OK(Add(ctx, a, b, &out));
  auto vo = ToVec(out);
  for (size_t i = 0; i < va.size(); ++i) ASSERT_EQ(vo[i], va[i] + vb[i]);
  ASSERT_OK(Axpby(ctx, 0.5f, a, -2.0f, b, &out));
  vo = ToVec(out);
  for (size_t i = 0; i < va.size(); ++i) ASSERT_EQ(vo[i], va[i] * 0.5f + vb[i] * -2.0f);
  ASSERT_OK(Mul(ctx, a, b, &out));
  vo = ToVec(out);
  for (size_t i = 0; i < va.size(); ++i) ASSERT_EQ(vo[i], va[i] * vb[i]);
  ASSERT_OK(Scale(ctx, a, 3.0f, &out));
  vo = ToVec(out);
  for (size_t i = 0; i < va.size(); ++i) ASSERT_EQ(vo[i], va[i] * 3.0f);
}

TEST(ElementwiseTest, OutputMayAliasAnInput) {
  auto ctx = CpuContext();
  Tensor a = RandomF32({1000}, 1), b = RandomF32({1000}, 2);
  const auto va = ToVec(a), vb = ToVec(b);
  ASSERT_OK(Add(ctx, a, b, &a));
  const auto vo = ToVec(a);
  for (size_t i = 0; i < va.size(); ++i) ASSERT_EQ(vo[i], va[i] + vb[i]);
}

TEST(ElementwiseTest, AddBiasAndSumRows) {
  test::TwoPools pools;
  const int64_t n = 5000, f = 37;
  Tensor x = RandomF32({n, f}, 3), bias = RandomF32({f}, 4);
  Tensor out = Tensor::Empty({n, f}, DType::kF32);
  ASSERT_OK(AddBias(pools.ctx3, x, bias, &out));
  const auto vx = ToVec(x), vb = ToVec(bias), vo = ToVec(out);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < f; ++j) ASSERT_EQ(vo[i * f + j], vx[i * f + j] + vb[j]);
  }
  Tensor s1 = Tensor::Empty({f}, DType::kF32), s3 = Tensor::Empty({f}, DType::kF32);
  ASSERT_OK(SumRows(pools.ctx1, x, &s1));
  ASSERT_OK(SumRows(pools.ctx3, x, &s3));
  EXPECT_TRUE(test::BitwiseEqual(s1, s3)) << "SumRows depends on the thread count";
  std::vector<double> want(f, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < f; ++j) want[j] += vx[i * f + j];
  }
  test::ExpectClose(ToVec(s1), want, 1e-4, 1e-3, "SumRows");
  // No rows: zeros.
  Tensor empty = Tensor::Empty({0, f}, DType::kF32);
  ASSERT_OK(SumRows(pools.ctx3, empty, &s1));
  for (float v : ToVec(s1)) EXPECT_EQ(v, 0.0f);
}

TEST(ElementwiseTest, ErrorsNameTheProblem) {
  auto ctx = CpuContext();
  Tensor a = RandomF32({4, 3}, 1), b = RandomF32({3, 4}, 2), out = Tensor::Empty({4, 3}, DType::kF32);
  EXPECT_ERROR_CONTAINS(Add(ctx, a, b, &out), "Add: b", "expected shape [4, 3]", "[3, 4]");
  Tensor bi = Tensor::Zeros({4, 3}, DType::kI64);
  EXPECT_ERROR_CONTAINS(Mul(ctx, a, bi, &out), "Mul: b", "f32", "i64");
  EXPECT_ERROR_CONTAINS(Scale(ctx, a, 1.0f, nullptr), "Scale: out", "null");
  Tensor bias = RandomF32({4}, 3);
  EXPECT_ERROR_CONTAINS(AddBias(ctx, a, bias, &out), "AddBias: bias", "[3]", "[4]");
  Tensor gb = Tensor::Empty({4}, DType::kF32);
  EXPECT_ERROR_CONTAINS(SumRows(ctx, a, &gb), "SumRows: grad_bias", "[3]");
  EXPECT_ERROR_CONTAINS(Add(ctx, a.Transpose(0, 1), b, &out), "Add: a", "contiguous");
}

}  // namespace
}  // namespace foresight::kernels

namespace foresight::kernels {
namespace {

// An op given operands on two devices refuses, naming both, rather than
// copy one silently.
TEST(DeviceTest, CudaOpsRefuseMixedDevices) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU here: CUDA dispatch not exercised";
  auto ctx = CpuContext();
  ASSERT_OK_AND_ASSIGN(Tensor a, Tensor::EmptyOn(Device::Cuda(0), {4}, DType::kF32));
  ASSERT_OK_AND_ASSIGN(Tensor out, Tensor::EmptyOn(Device::Cuda(0), {4}, DType::kF32));
  Tensor cpu = Tensor::Zeros({4}, DType::kF32);
  EXPECT_ERROR_CONTAINS(Add(ctx, a, cpu, &out), "Add", "cuda:0", "cpu", "share one device");
}

}  // namespace
}  // namespace foresight::kernels
