// LayerNorm fused with bias and residual: forward against the double
// reference, backward against central differences of that reference (in
// double) and of the f32 op, column sums identical for any thread count.
#include <gtest/gtest.h>

#include "foresight/kernels/transformer.h"
#include "kernel_test_util.h"
#include "reference/transformer_reference.h"

namespace foresight::kernels::test {
namespace {

constexpr float kEps = 1e-5f;

struct Out {
  Tensor sum, y, mean, rstd;
};

Out Forward(const ExecContext& ctx, const Tensor& x, const Tensor& bias, const Tensor& residual, const Tensor& gamma,
            const Tensor& beta) {
  const int64_t t = x.size(0), e = x.size(1);
  Out o{Tensor::Empty({t, e}, DType::kF32), Tensor::Empty({t, e}, DType::kF32), Tensor::Empty({t}, DType::kF32),
        Tensor::Empty({t}, DType::kF32)};
  const Status s = LayerNorm(ctx, x, bias, residual, gamma, beta, kEps, &o.sum, &o.y, &o.mean, &o.rstd);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return o;
}

std::vector<double> D(const Tensor& t) { return t.defined() ? ToDouble(t) : std::vector<double>{}; }

TEST(LayerNormTest, ForwardMatchesReferenceWithAndWithoutBiasAndResidual) {
  TwoPools pools;
  const int64_t t = 37, e = 50;
  const Tensor x = RandomF32({t, e}, 1, -3, 5), gamma = RandomF32({e}, 2), beta = RandomF32({e}, 3);
  for (bool with_bias : {false, true}) {
    for (bool with_res : {false, true}) {
      SCOPED_TRACE(std::to_string(with_bias) + std::to_string(with_res));
      const Tensor bias = with_bias ? RandomF32({e}, 4) : Tensor();
      const Tensor res = with_res ? RandomF32({t, e}, 5) : Tensor();
      const Out o = Forward(pools.ctx3, x, bias, res, gamma, beta);
      ExpectClose(ToVec(o.y), reference::LayerNormForward(D(x), D(bias), D(res), D(gamma), D(beta), kEps, e), 1e-5,
                  1e-5, "out");
      std::vector<double> h = D(x);
      for (int64_t i = 0; i < t * e; ++i) {
        h[i] += (with_bias ? bias.data<float>()[i % e] : 0.0f) + (with_res ? res.data<float>()[i] : 0.0f);
      }
      ExpectClose(ToVec(o.sum), h, 1e-6, 1e-6, "sum");
      // Without `sum` the op still normalises x + bias + residual.
      Tensor y2 = Tensor::Empty({t, e}, DType::kF32), m2 = Tensor::Empty({t}, DType::kF32),
             r2 = Tensor::Empty({t}, DType::kF32);
      ASSERT_TRUE(LayerNorm(pools.ctx1, x, bias, res, gamma, beta, kEps, nullptr, &y2, &m2, &r2).ok());
      EXPECT_TRUE(BitwiseEqual(y2, o.y));
      // h written over x in place.
      Tensor xin = x.Clone();
      ASSERT_TRUE(LayerNorm(pools.ctx3, xin, bias, res, gamma, beta, kEps, &xin, &y2, &m2, &r2).ok());
      EXPECT_TRUE(BitwiseEqual(y2, o.y));
      EXPECT_TRUE(BitwiseEqual(xin, o.sum));
    }
  }
}

TEST(LayerNormTest, BackwardMatchesFiniteDifferences) {
  TwoPools pools;
  const int64_t t = 6, e = 9;
  const Tensor h = RandomF32({t, e}, 11, -2, 2), gamma = RandomF32({e}, 12), beta = RandomF32({e}, 13),
               go = RandomF32({t, e}, 14);
  const Out o = Forward(pools.ctx1, h, Tensor(), Tensor(), gamma, beta);
  Tensor gh = Tensor::Empty({t, e}, DType::kF32), gg = Tensor::Empty({e}, DType::kF32),
         gb = Tensor::Empty({e}, DType::kF32);
  ASSERT_TRUE(LayerNormBackward(pools.ctx1, o.sum, gamma, o.mean, o.rstd, go, &gh, &gg, &gb).ok());
  const std::vector<double> w = ToDouble(go);
  std::vector<size_t> checked;
  auto num_h = NumericGrad(
      [&](const std::vector<double>& x) { return Dot(reference::LayerNormForward(x, {}, {}, D(gamma), D(beta), kEps, e), w); },
      D(h), 1e-5, 1, &checked);
  ExpectGradClose(ToVec(gh), num_h, checked, 1e-3, 1e-4, "grad_h");
  checked.clear();
  auto num_g = NumericGrad(
      [&](const std::vector<double>& g) { return Dot(reference::LayerNormForward(D(h), {}, {}, g, D(beta), kEps, e), w); },
      D(gamma), 1e-5, 1, &checked);
  ExpectGradClose(ToVec(gg), num_g, checked, 1e-4, 1e-4, "grad_gamma");
  checked.clear();
  auto num_b = NumericGrad(
      [&](const std::vector<double>& b) { return Dot(reference::LayerNormForward(D(h), {}, {}, D(gamma), b, kEps, e), w); },
      D(beta), 1e-5, 1, &checked);
  ExpectGradClose(ToVec(gb), num_b, checked, 1e-4, 1e-4, "grad_beta");
}

TEST(LayerNormTest, BackwardIdenticalForAnyThreadCount) {
  TwoPools pools;
  const int64_t t = 1000, e = 64;  // many row chunks of the column sums
  const Tensor h = RandomF32({t, e}, 21), gamma = RandomF32({e}, 22), beta = RandomF32({e}, 23),
               go = RandomF32({t, e}, 24);
  Tensor gh[2], gg[2], gb[2];
  for (int i = 0; i < 2; ++i) {
    const ExecContext& ctx = i == 0 ? pools.ctx1 : pools.ctx3;
    const Out o = Forward(ctx, h, Tensor(), Tensor(), gamma, beta);
    gh[i] = Tensor::Empty({t, e}, DType::kF32);
    gg[i] = Tensor::Empty({e}, DType::kF32);
    gb[i] = Tensor::Empty({e}, DType::kF32);
    ASSERT_TRUE(LayerNormBackward(ctx, o.sum, gamma, o.mean, o.rstd, go, &gh[i], &gg[i], &gb[i]).ok());
  }
  EXPECT_TRUE(BitwiseEqual(gh[0], gh[1]));
  EXPECT_TRUE(BitwiseEqual(gg[0], gg[1]));
  EXPECT_TRUE(BitwiseEqual(gb[0], gb[1]));
}

TEST(LayerNormTest, RejectsBadShapes) {
  const ExecContext ctx = CpuContext();
  const Tensor x = RandomF32({4, 6}, 1), gamma = RandomF32({6}, 2), beta = RandomF32({6}, 3);
  Tensor y = Tensor::Empty({4, 6}, DType::kF32), m = Tensor::Empty({4}, DType::kF32), r = Tensor::Empty({4}, DType::kF32);
  Status s = LayerNorm(ctx, x, RandomF32({5}, 4), Tensor(), gamma, beta, kEps, nullptr, &y, &m, &r);
  EXPECT_NE(s.ToString().find("LayerNorm: bias"), std::string::npos) << s.ToString();
  s = LayerNorm(ctx, x, Tensor(), RandomF32({4, 5}, 4), gamma, beta, kEps, nullptr, &y, &m, &r);
  EXPECT_NE(s.ToString().find("LayerNorm: residual"), std::string::npos) << s.ToString();
  s = LayerNorm(ctx, x, Tensor(), Tensor(), gamma, beta, 0.0f, nullptr, &y, &m, &r);
  EXPECT_NE(s.ToString().find("eps must be positive"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace foresight::kernels::test
