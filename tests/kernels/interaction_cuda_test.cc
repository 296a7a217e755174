// The CUDA feature interaction (bit for bit: only products and sums, no FMA
// contraction on either side) and BCE with logits (to rounding: CUDA's
// expf / log1pf may differ from glibc's in the last place) against the CPU
// (label gpu; skipped with a message where no GPU is visible).
#include <gtest/gtest.h>

#include <cmath>

#include "foresight/core/device.h"
#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"

namespace foresight::kernels {
namespace {

class InteractionCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU visible: the CUDA interaction and BCE are compiled but not run";
  }
};

Tensor OnGpu(const Tensor& t) { return t.To(Device::Cuda(0)).value(); }
std::vector<float> Back(const Tensor& t) { return test::ToVec(t.To(Device::Cpu()).value()); }

TEST_F(InteractionCudaTest, MatchesCpu) {
  for (Interaction kind : {Interaction::kDot, Interaction::kCat}) {
    const int64_t b = 257, t = 26, d = 16;
    Tensor x = test::RandomF32({b, d}, 1), emb = test::RandomF32({b, t * d}, 2);
    const int64_t w = InteractionWidth(kind, t, d, d);
    Tensor g = test::RandomF32({b, w}, 3);
    ExecContext cpu = CpuContext();
    Tensor out = Tensor::Empty({b, w}, DType::kF32), gx = Tensor::Empty({b, d}, DType::kF32),
           ge = Tensor::Empty({b, t * d}, DType::kF32);
    ASSERT_TRUE(FeatureInteraction(cpu, kind, t, x, emb, &out).ok());
    ASSERT_TRUE(FeatureInteractionBackward(cpu, kind, t, x, emb, g, &gx, &ge).ok());
    ExecContext gpu = CpuContext();
    gpu.device = Device::Cuda(0);
    Tensor dout = Tensor::EmptyOn(gpu.device, {b, w}, DType::kF32).value();
    Tensor dgx = Tensor::EmptyOn(gpu.device, {b, d}, DType::kF32).value();
    Tensor dge = Tensor::EmptyOn(gpu.device, {b, t * d}, DType::kF32).value();
    ASSERT_TRUE(FeatureInteraction(gpu, kind, t, OnGpu(x), OnGpu(emb), &dout).ok());
    ASSERT_TRUE(FeatureInteractionBackward(gpu, kind, t, OnGpu(x), OnGpu(emb), OnGpu(g), &dgx, &dge).ok());
    EXPECT_EQ(Back(dout), test::ToVec(out));
    EXPECT_EQ(Back(dgx), test::ToVec(gx));
    EXPECT_EQ(Back(dge), test::ToVec(ge));
  }
}

TEST_F(InteractionCudaTest, BceMatchesCpu) {
  const int64_t n = 10000;
  Tensor z = test::RandomF32({n}, 4, -30.0f, 30.0f), y = Tensor::Empty({n}, DType::kF32);
  for (int64_t i = 0; i < n; ++i) y.data<float>()[i] = static_cast<float>(i % 3 == 0);
  ExecContext cpu = CpuContext();
  float l = 0, dl = 0;
  Tensor g = Tensor::Empty({n}, DType::kF32);
  ASSERT_TRUE(BceWithLogits(cpu, z, y, &l, &g).ok());
  ExecContext gpu = CpuContext();
  gpu.device = Device::Cuda(0);
  Tensor dg = Tensor::EmptyOn(gpu.device, {n}, DType::kF32).value();
  ASSERT_TRUE(BceWithLogits(gpu, OnGpu(z), OnGpu(y), &dl, &dg).ok());
  EXPECT_NEAR(dl, l, 1e-6 * std::fabs(l));
  test::ExpectClose(Back(dg), std::vector<double>(test::ToDouble(g)), 1e-5, 1e-9, "grad");
}

}  // namespace
}  // namespace foresight::kernels
