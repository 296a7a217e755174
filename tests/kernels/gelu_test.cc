// GELU (erf and tanh forms, fused bias): forward against libm in double,
// backward against central differences in double of the exact function.
#include <gtest/gtest.h>

#include "foresight/kernels/transformer.h"
#include "kernel_test_util.h"
#include "reference/transformer_reference.h"

namespace foresight::kernels::test {
namespace {

TEST(GeluTest, MatchesExactFunctionAndItsDerivative) {
  TwoPools pools;
  const int64_t rows = 40, cols = 77;
  // Wide range: the tails (|u| > 5, where tanh and erf saturate) included.
  const Tensor x = RandomF32({rows, cols}, 1, -9.0f, 9.0f), go = RandomF32({rows, cols}, 2);
  for (GeluForm form : {GeluForm::kErf, GeluForm::kTanh}) {
    for (bool with_bias : {false, true}) {
      SCOPED_TRACE(std::string(GeluFormName(form)) + (with_bias ? " bias" : ""));
      const Tensor bias = with_bias ? RandomF32({cols}, 3) : Tensor();
      Tensor out = Tensor::Empty({rows, cols}, DType::kF32), gx = Tensor::Empty({rows, cols}, DType::kF32);
      ASSERT_TRUE(Gelu(pools.ctx3, form, x, bias, &out).ok());
      ASSERT_TRUE(GeluBackward(pools.ctx3, form, x, bias, go, &gx).ok());
      std::vector<double> want(rows * cols), dwant(rows * cols);
      for (int64_t i = 0; i < rows * cols; ++i) {
        const double u = x.data<float>()[i] + (with_bias ? bias.data<float>()[i % cols] : 0.0f);
        want[i] = reference::Gelu(form, u);
        const double h = 1e-6;
        dwant[i] = go.data<float>()[i] * (reference::Gelu(form, u + h) - reference::Gelu(form, u - h)) / (2 * h);
      }
      ExpectClose(ToVec(out), want, 1e-5, 1e-6, "gelu");
      ExpectClose(ToVec(gx), dwant, 1e-4, 1e-5, "gelu'");
      Tensor out1 = Tensor::Empty({rows, cols}, DType::kF32);
      ASSERT_TRUE(Gelu(pools.ctx1, form, x, bias, &out1).ok());
      EXPECT_TRUE(BitwiseEqual(out, out1));
    }
  }
}

TEST(GeluTest, RejectsBadBias) {
  const ExecContext ctx = CpuContext();
  const Tensor x = RandomF32({3, 4}, 1);
  Tensor out = Tensor::Empty({3, 4}, DType::kF32);
  const Status s = Gelu(ctx, GeluForm::kErf, x, RandomF32({3}, 2), &out);
  EXPECT_NE(s.ToString().find("Gelu: bias"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace foresight::kernels::test
