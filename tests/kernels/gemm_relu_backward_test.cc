// GemmReluBackward, the backward through a Linear layer into the ReLU below
// it with the mask (and the lower layer's bias gradient) taken on each tile
// of the product: the same bits as Gemm (beta 0) then ReluBackwardSumRows,
// at one and three threads. The shapes cover the DLRM step's four such
// products (row tiles that start on the bias sum's chunk boundaries, so the
// sum runs in the tiles' epilogue) and shapes whose row tiles split a chunk
// (the sum then runs as its own pass over grad_z), k = 0 and empty outputs.
#include <cmath>
#include <string>

#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

using test::BitwiseEqual;
using test::RandomF32;

struct Dims {
  int64_t n, m, k;  // grad_y [n, m], w [k, m], grad_z [n, k]
};

// top1 -> top0 (2048 x 256 -> 512), bottom1 -> bottom0 (the same shape),
// bottom2 -> bottom1 (64 -> 256), top2 -> top1 (1 -> 256); then 1000 x 100
// (250-row tiles against 163-row chunks on 2 cores), 700 x 1100 (column
// tiles), a handful of rows, k = 0 and no rows.
const Dims kDims[] = {{2048, 256, 512}, {2048, 64, 256}, {2048, 1, 256}, {1000, 70, 100},
                      {700, 40, 1100},  {77, 600, 300},  {3, 5, 2},      {9, 0, 7},
                      {0, 4, 3}};

// A ReLU output: about half its elements exactly zero, the rest positive.
Tensor ReluOutput(const Shape& shape, uint64_t seed) {
  Tensor y = RandomF32(shape, seed);
  for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = std::max(y.data<float>()[i], 0.0f);
  return y;
}

TEST(GemmReluBackwardTest, EqualsGemmThenReluBackwardSumRows) {
  test::TwoPools pools;
  uint64_t seed = 1;
  for (const Dims d : kDims) {
    SCOPED_TRACE("n" + std::to_string(d.n) + " m" + std::to_string(d.m) + " k" + std::to_string(d.k));
    const Tensor gy = RandomF32({d.n, d.m}, seed++);
    const Tensor w = RandomF32({d.k, d.m}, seed++);
    const Tensor y = ReluOutput({d.n, d.k}, seed++);
    Tensor product = Tensor::Empty({d.n, d.k}, DType::kF32);
    ASSERT_OK(Gemm(pools.ctx1, gy, false, w, true, 1.0f, 0.0f, &product));
    Tensor want = Tensor::Empty({d.n, d.k}, DType::kF32), want_bias = Tensor::Empty({d.k}, DType::kF32);
    ASSERT_OK(ReluBackwardSumRows(pools.ctx1, y, product, &want, &want_bias));
    for (const ExecContext* ctx : {&pools.ctx1, &pools.ctx3}) {
      Tensor got = RandomF32({d.n, d.k}, 999), got_bias = RandomF32({d.k}, 998);  // stale values must not leak
      ASSERT_OK(GemmReluBackward(*ctx, gy, w, y, &got, &got_bias));
      EXPECT_TRUE(BitwiseEqual(got, want));
      EXPECT_TRUE(BitwiseEqual(got_bias, want_bias));
      Tensor no_bias = RandomF32({d.n, d.k}, 997);
      ASSERT_OK(GemmReluBackward(*ctx, gy, w, y, &no_bias, nullptr));
      EXPECT_TRUE(BitwiseEqual(no_bias, want));
    }
  }
}

TEST(GemmReluBackwardTest, RejectsBadOperands) {
  auto ctx = CpuContext();
  const Tensor gy = RandomF32({4, 3}, 1), w = RandomF32({5, 3}, 2), y = ReluOutput({4, 5}, 3);
  Tensor gz = Tensor::Empty({4, 5}, DType::kF32), gb = Tensor::Empty({5}, DType::kF32);
  EXPECT_ERROR_CONTAINS(GemmReluBackward(ctx, gy, RandomF32({5, 4}, 4), y, &gz, &gb), "GemmReluBackward",
                        "inner dimensions differ");
  EXPECT_ERROR_CONTAINS(GemmReluBackward(ctx, gy, w, ReluOutput({4, 4}, 5), &gz, &gb), "GemmReluBackward: y",
                        "[4, 5]", "[4, 4]");
  Tensor bad_bias = Tensor::Empty({4}, DType::kF32);
  EXPECT_ERROR_CONTAINS(GemmReluBackward(ctx, gy, w, y, &gz, &bad_bias), "GemmReluBackward: grad_bias", "[5]",
                        "[4]");
  Tensor wide = Tensor::Empty({4, 8}, DType::kF32);
  Tensor view = wide.Slice(1, 0, 5);
  EXPECT_ERROR_CONTAINS(GemmReluBackward(ctx, gy, w, y, &view, &gb), "GemmReluBackward: grad_z", "contiguous");
  Tensor y_alias = y.Clone();
  EXPECT_ERROR_CONTAINS(GemmReluBackward(ctx, gy, w, y_alias, &y_alias, &gb), "GemmReluBackward", "alias");
  EXPECT_ERROR_CONTAINS(GemmReluBackward(ctx, gy, w, y, nullptr, &gb), "GemmReluBackward: grad_z", "null");
}

}  // namespace
}  // namespace foresight::kernels
