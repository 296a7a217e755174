// GemmBatch, independent products whose tiles share one pool round: the
// same bits as a Gemm call each. And GemmBias, a Linear layer's forward with the bias (and ReLU) added to each
// tile of the product as it leaves BLAS: the same bits as Gemm (beta 0) then
// AddBias or AddBiasRelu, at one and three threads, at the DLRM step's
// shapes (including ks that OpenBLAS splits into several k blocks) and at
// shapes whose tiles do not divide the output.
#include <cmath>

#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

using test::BitwiseEqual;
using test::RandomF32;

struct Dims {
  int64_t m, k, n;
};

// The DLRM step's layers at batch 2048 (bottom 13-512-256-64, top
// 415-512-256-1), then shapes with ragged tiles (n above 512 splits the
// columns; m not a multiple of the row tile), k = 0 and empty outputs.
const Dims kDims[] = {{2048, 13, 512}, {2048, 512, 256}, {2048, 256, 64}, {2048, 415, 512}, {2048, 256, 1},
                      {1000, 70, 1100}, {77, 600, 300}, {3, 5, 2}, {9, 0, 7}, {0, 4, 3}};

TEST(GemmBiasTest, EqualsGemmThenTheBiasPass) {
  test::TwoPools pools;
  uint64_t seed = 1;
  for (const Dims d : kDims) {
    for (const bool relu : {false, true}) {
      SCOPED_TRACE("m" + std::to_string(d.m) + " k" + std::to_string(d.k) + " n" + std::to_string(d.n) +
                   (relu ? " relu" : ""));
      const Tensor x = RandomF32({d.m, d.k}, seed++);
      const Tensor w = RandomF32({d.k, d.n}, seed++);
      Tensor bias = RandomF32({d.n}, seed++, -0.5f, 0.5f);
      if (d.n > 1) bias.data<float>()[1] = NAN;  // a NaN bias stays NaN, through ReLU too
      Tensor want = Tensor::Empty({d.m, d.n}, DType::kF32);
      ASSERT_OK(Gemm(pools.ctx1, x, false, w, false, 1.0f, 0.0f, &want));
      ASSERT_OK(relu ? AddBiasRelu(pools.ctx1, want, bias, &want) : AddBias(pools.ctx1, want, bias, &want));
      for (const ExecContext* ctx : {&pools.ctx1, &pools.ctx3}) {
        Tensor got = RandomF32({d.m, d.n}, 999);  // stale values must not leak into y
        ASSERT_OK(GemmBias(*ctx, x, w, bias, relu, &got));
        EXPECT_TRUE(BitwiseEqual(got, want));
      }
    }
  }
}

// y as a view of rows with a leading stride above its length: the bias goes
// to the view's columns only.
TEST(GemmBiasTest, WritesOnlyAViewsColumns) {
  test::TwoPools pools;
  const Tensor x = RandomF32({600, 40}, 1), w = RandomF32({40, 30}, 2), bias = RandomF32({30}, 3);
  Tensor want = Tensor::Empty({600, 30}, DType::kF32);
  ASSERT_OK(Gemm(pools.ctx1, x, false, w, false, 1.0f, 0.0f, &want));
  ASSERT_OK(AddBiasRelu(pools.ctx1, want, bias, &want));
  Tensor wide = RandomF32({600, 50}, 4);
  const Tensor before = wide.Clone();
  Tensor view = wide.Slice(1, 10, 40);
  ASSERT_OK(GemmBias(pools.ctx3, x, w, bias, /*relu=*/true, &view));
  EXPECT_TRUE(BitwiseEqual(view.Clone(), want));
  for (int64_t r = 0; r < 600; ++r) {
    for (int64_t c : {0, 9, 40, 49}) {
      ASSERT_EQ(wide.data<float>()[r * 50 + c], before.data<float>()[r * 50 + c]) << r << "," << c;
    }
  }
}

TEST(GemmBiasTest, RejectsBadOperands) {
  auto ctx = CpuContext();
  const Tensor x = RandomF32({4, 3}, 1), w = RandomF32({3, 5}, 2);
  Tensor y = Tensor::Empty({4, 5}, DType::kF32);
  EXPECT_ERROR_CONTAINS(GemmBias(ctx, x, w, RandomF32({4}, 3), true, &y), "GemmBias: bias", "[5]", "[4]");
  EXPECT_ERROR_CONTAINS(GemmBias(ctx, x, RandomF32({4, 5}, 4), RandomF32({5}, 3), false, &y), "GemmBias",
                        "inner dimensions differ");
  Tensor ybad = Tensor::Empty({4, 4}, DType::kF32);
  EXPECT_ERROR_CONTAINS(GemmBias(ctx, x, w, RandomF32({5}, 3), false, &ybad), "GemmBias: y", "[4, 5]", "[4, 4]");
  Tensor sq = RandomF32({4, 4}, 5);
  EXPECT_ERROR_CONTAINS(GemmBias(ctx, sq, RandomF32({4, 4}, 6), RandomF32({4}, 7), false, &sq), "GemmBias",
                        "alias");
  EXPECT_ERROR_CONTAINS(GemmBias(ctx, x, w, RandomF32({5}, 3), false, nullptr), "GemmBias: y", "null");
}

// A Linear layer's backward (dX = dY W^T, dW = X^T dY, a fresh gradient
// and an accumulated one), a one-tile product beside a many-tile one, k = 0
// and an empty product: each c the same bits as its own Gemm call.
TEST(GemmBatchTest, EqualsOneGemmAProduct) {
  test::TwoPools pools;
  const Tensor gy = RandomF32({2048, 512}, 1), w = RandomF32({13, 512}, 2), x = RandomF32({2048, 13}, 3);
  const Tensor a0 = RandomF32({5, 0}, 4), b0 = RandomF32({0, 6}, 5);
  const Tensor ae = RandomF32({0, 3}, 6), be = RandomF32({3, 4}, 7);
  const Tensor a1 = RandomF32({700, 300}, 8), b1 = RandomF32({1100, 300}, 9);
  struct Spec {
    const Tensor *a, *b;
    bool ta, tb;
    float alpha, beta;
    Shape c;
  };
  const std::vector<Spec> specs = {{&gy, &w, false, true, 1.0f, 0.0f, {2048, 13}},
                                   {&x, &gy, true, false, 1.0f, 1.0f, {13, 512}},
                                   {&a0, &b0, false, false, 1.0f, 0.5f, {5, 6}},
                                   {&ae, &be, false, false, 1.0f, 0.0f, {0, 4}},
                                   {&a1, &b1, false, true, -0.5f, 1.0f, {700, 1100}}};
  std::vector<Tensor> want;
  uint64_t seed = 100;
  for (const Spec& s : specs) {
    Tensor c = RandomF32(s.c, seed++);
    ASSERT_OK(Gemm(pools.ctx1, *s.a, s.ta, *s.b, s.tb, s.alpha, s.beta, &c));
    want.push_back(c);
  }
  for (const ExecContext* ctx : {&pools.ctx1, &pools.ctx3}) {
    std::vector<Tensor> got;
    seed = 100;
    for (const Spec& s : specs) got.push_back(RandomF32(s.c, seed++));  // the same initial c as above
    std::vector<GemmProduct> products;
    for (size_t i = 0; i < specs.size(); ++i) {
      const Spec& s = specs[i];
      products.push_back({s.a, s.ta, s.b, s.tb, s.alpha, s.beta, &got[i]});
    }
    ASSERT_OK(GemmBatch(*ctx, products));
    for (size_t i = 0; i < specs.size(); ++i) EXPECT_TRUE(BitwiseEqual(got[i], want[i])) << "product " << i;
  }
  ASSERT_OK(GemmBatch(pools.ctx3, {}));
}

TEST(GemmBatchTest, RejectsDependentOrBadProducts) {
  auto ctx = CpuContext();
  const Tensor a = RandomF32({4, 3}, 1), b = RandomF32({3, 5}, 2);
  Tensor c = Tensor::Empty({4, 5}, DType::kF32), d = Tensor::Empty({4, 3}, DType::kF32);
  const Tensor b2 = RandomF32({5, 3}, 3);
  // The second product reads the first one's c.
  EXPECT_ERROR_CONTAINS(GemmBatch(ctx, {{&a, false, &b, false, 1, 0, &c}, {&c, false, &b2, false, 1, 0, &d}}),
                        "GemmBatch: product 0", "operand of product 1", "independent");
  Tensor cbad = Tensor::Empty({4, 4}, DType::kF32);
  EXPECT_ERROR_CONTAINS(GemmBatch(ctx, {{&a, false, &b, false, 1, 0, &c}, {&a, false, &b, false, 1, 0, &cbad}}),
                        "GemmBatch: product 1: c", "[4, 5]", "[4, 4]");
  EXPECT_ERROR_CONTAINS(GemmBatch(ctx, {{nullptr, false, &b, false, 1, 0, &c}}), "GemmBatch: product 0", "null");
}

}  // namespace
}  // namespace foresight::kernels
