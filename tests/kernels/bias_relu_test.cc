// AddBiasRelu and ReluBackwardSumRows, the fused passes of a Linear layer
// followed by ReLU: the same bits as the ops they fuse (AddBias then
// Activate(kRelu); ActivateBackward(kRelu) then SumRows), at one and three
// threads, in place, with NaN, zeros and signed zeros among the inputs.
#include <cmath>
#include <vector>

#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

using test::BitwiseEqual;
using test::RandomF32;

// Pre-activations with the edge cases a ReLU sees: exact zeros, -0.0f, NaN.
Tensor WithEdgeCases(Tensor t) {
  float* p = t.data<float>();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; i += 97) p[i] = 0.0f;
  for (int64_t i = 13; i < n; i += 101) p[i] = -0.0f;
  for (int64_t i = 29; i < n; i += 211) p[i] = NAN;
  return t;
}

const Shape kShapes[] = {{2048, 512}, {1000, 203}, {7, 3}, {1, 1}, {0, 5}, {33, 1}};

TEST(BiasReluTest, AddBiasReluEqualsAddBiasThenRelu) {
  test::TwoPools pools;
  uint64_t seed = 1;
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(ShapeToString(shape));
    Tensor x = WithEdgeCases(RandomF32(shape, seed++));
    Tensor bias = RandomF32({shape[1]}, seed++, -0.5f, 0.5f);
    // Column 0 sums to exactly -0.0f in every third row: ReLU must give +0.0f.
    bias.data<float>()[0] = -0.0f;
    for (int64_t r = 0; r < shape[0]; r += 3) x.data<float>()[r * shape[1]] = -0.0f;
    Tensor want = Tensor::Empty(shape, DType::kF32);
    ASSERT_OK(AddBias(pools.ctx1, x, bias, &want));
    ASSERT_OK(Activate(pools.ctx1, Activation::kRelu, 0.0f, want, &want));
    for (const ExecContext* ctx : {&pools.ctx1, &pools.ctx3}) {
      Tensor got = Tensor::Empty(shape, DType::kF32);
      ASSERT_OK(AddBiasRelu(*ctx, x, bias, &got));
      EXPECT_TRUE(BitwiseEqual(got, want));
      Tensor in_place = x.Clone();
      ASSERT_OK(AddBiasRelu(*ctx, in_place, bias, &in_place));
      EXPECT_TRUE(BitwiseEqual(in_place, want));
    }
  }
}

TEST(BiasReluTest, ReluBackwardSumRowsEqualsReluBackwardThenSumRows) {
  test::TwoPools pools;
  uint64_t seed = 100;
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(ShapeToString(shape));
    // z is the pre-activation; the fused op sees only y = relu(z).
    const Tensor z = WithEdgeCases(RandomF32(shape, seed++));
    Tensor y = Tensor::Empty(shape, DType::kF32);
    ASSERT_OK(Activate(pools.ctx1, Activation::kRelu, 0.0f, z, &y));
    const Tensor gy = WithEdgeCases(RandomF32(shape, seed++));
    Tensor want_gz = Tensor::Empty(shape, DType::kF32), want_gb = Tensor::Empty({shape[1]}, DType::kF32);
    ASSERT_OK(ActivateBackward(pools.ctx1, Activation::kRelu, 0.0f, z, gy, &want_gz));
    ASSERT_OK(SumRows(pools.ctx1, want_gz, &want_gb));
    for (const ExecContext* ctx : {&pools.ctx1, &pools.ctx3}) {
      Tensor gz = Tensor::Empty(shape, DType::kF32), gb = Tensor::Empty({shape[1]}, DType::kF32);
      ASSERT_OK(ReluBackwardSumRows(*ctx, y, gy, &gz, &gb));
      EXPECT_TRUE(BitwiseEqual(gz, want_gz));
      EXPECT_TRUE(BitwiseEqual(gb, want_gb));
      Tensor gz_only = Tensor::Empty(shape, DType::kF32);
      ASSERT_OK(ReluBackwardSumRows(*ctx, y, gy, &gz_only, nullptr));
      EXPECT_TRUE(BitwiseEqual(gz_only, want_gz));
    }
  }
}

TEST(BiasReluTest, RejectsMismatchedShapes) {
  auto ctx = CpuContext();
  const Tensor x = RandomF32({4, 3}, 1);
  Tensor out = Tensor::Empty({4, 3}, DType::kF32);
  EXPECT_FALSE(AddBiasRelu(ctx, x, RandomF32({4}, 2), &out).ok());
  Tensor gz = Tensor::Empty({4, 3}, DType::kF32), gb = Tensor::Empty({4}, DType::kF32);
  EXPECT_FALSE(ReluBackwardSumRows(ctx, x, RandomF32({4, 2}, 3), &gz, nullptr).ok());
  EXPECT_FALSE(ReluBackwardSumRows(ctx, x, x, &gz, &gb).ok());
}

}  // namespace
}  // namespace foresight::kernels
