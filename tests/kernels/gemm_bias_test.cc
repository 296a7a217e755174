// GemmBias, a Linear layer's forward with the bias (and ReLU) added to each
// tile of the product as it leaves BLAS: the same bits as Gemm (beta 0) then
// AddBias or AddBiasRelu, at one and three threads, at the DLRM step's
// shapes (including ks that the sgemm splits into several k blocks) and at
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

}  // namespace
}  // namespace foresight::kernels
