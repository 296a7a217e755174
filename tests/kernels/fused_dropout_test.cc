// The fused dropout kernels against the passes they replace, bit for bit:
// ReluDropoutRows = Activate(kRelu) then DropoutRows (and its mask makes
// DropoutBackward equal DropoutBackward then ActivateBackward), and
// GatherRowsDropout = GatherRows then DropoutRows keyed by the same ids.
#include <cmath>
#include <limits>
#include <vector>

#include "foresight/kernels/keyed_dropout.h"
#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

using test::RandomF32;

// Row ids far apart and out of order, one repeated, so keyed rows start
// anywhere in the stream (unaligned spans, SIMD spans and tails).
Tensor ScatteredIds(int64_t rows, int64_t range) {
  Tensor ids = Tensor::Empty({rows}, DType::kI64);
  for (int64_t r = 0; r < rows; ++r) ids.data<int64_t>()[r] = (r * 104729 + 11) % range;
  if (rows > 3) ids.data<int64_t>()[3] = ids.data<int64_t>()[1];
  return ids;
}

// x with ReLU's edge cases among random values: +-0, NaN, +-inf, a
// denormal, so the fused test (x > 0) meets each of them.
Tensor EdgyInput(int64_t rows, int64_t cols, uint64_t seed) {
  Tensor x = RandomF32({rows, cols}, seed);
  const float special[] = {0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()};
  float* px = x.data<float>();
  for (int64_t i = 0; i < x.numel(); i += 5) px[i] = special[(i / 5) % 7];
  return x;
}

TEST(FusedDropoutTest, ReluDropoutRowsEqualsReluThenDropoutRowsBothWays) {
  test::TwoPools pools;
  for (const float p : {0.35f, 0.5f}) {
    for (const int64_t cols : {int64_t{1}, int64_t{37}, int64_t{128}, int64_t{256}, int64_t{300}}) {
      const int64_t rows = 150;
      const Tensor x = EdgyInput(rows, cols, 21), gy = RandomF32({rows, cols}, 22);
      const Tensor ids = ScatteredIds(rows, 1000003);
      // The two passes.
      Tensor r = Tensor::Empty(x.shape(), DType::kF32), y = Tensor::Empty(x.shape(), DType::kF32);
      Tensor mask = Tensor::Empty({x.numel()}, DType::kU8);
      Tensor g = Tensor::Empty(x.shape(), DType::kF32), gx = Tensor::Empty(x.shape(), DType::kF32);
      ASSERT_OK(Activate(pools.ctx1, Activation::kRelu, 0.0f, x, &r));
      ASSERT_OK(DropoutRows(pools.ctx1, p, r, ids, &y, &mask));
      ASSERT_OK(DropoutBackward(pools.ctx1, p, mask, gy, &g));
      ASSERT_OK(ActivateBackward(pools.ctx1, Activation::kRelu, 0.0f, x, g, &gx));
      // One pass each way, on one thread and on three.
      for (const ExecContext* ctx : {&pools.ctx1, &pools.ctx3}) {
        Tensor fy = Tensor::Empty(x.shape(), DType::kF32), fgx = Tensor::Empty(x.shape(), DType::kF32);
        Tensor fmask = Tensor::Empty({x.numel()}, DType::kU8);
        ASSERT_OK(ReluDropoutRows(*ctx, p, x, ids, &fy, &fmask));
        ASSERT_OK(DropoutBackward(*ctx, p, fmask, gy, &fgx));
        EXPECT_TRUE(test::BitwiseEqual(y, fy)) << "forward, p " << p << ", " << cols << " columns";
        EXPECT_TRUE(test::BitwiseEqual(gx, fgx)) << "backward, p " << p << ", " << cols << " columns";
        // The mask is the dropout's and ReLU's sign together.
        for (int64_t i = 0; i < x.numel(); ++i) {
          const bool both = mask.data<uint8_t>()[i] != 0 && x.data<float>()[i] > 0.0f;
          ASSERT_EQ(fmask.data<uint8_t>()[i], both ? 1 : 0) << i;
        }
        // No mask asked: the same output.
        Tensor ny = Tensor::Empty(x.shape(), DType::kF32);
        ASSERT_OK(ReluDropoutRows(*ctx, p, x, ids, &ny, nullptr));
        EXPECT_TRUE(test::BitwiseEqual(y, ny));
      }
    }
  }
}

TEST(FusedDropoutTest, GatherRowsDropoutEqualsGatherThenDropoutRows) {
  test::TwoPools pools;
  const int64_t table_rows = 700;
  for (const int64_t cols : {int64_t{37}, int64_t{128}, int64_t{300}}) {
    const Tensor table = RandomF32({table_rows, cols}, 31);
    Tensor half = Tensor::Empty(table.shape(), DType::kF16), bf = Tensor::Empty(table.shape(), DType::kBF16);
    for (int64_t i = 0; i < table.numel(); ++i) {
      half.data<Half>()[i].bits = FloatToHalf(table.data<float>()[i]);
      bf.data<BFloat16>()[i].bits = FloatToBFloat16(table.data<float>()[i]);
    }
    const int64_t n = 260;
    const Tensor ids = ScatteredIds(n, table_rows);
    Tensor ids32 = Tensor::Empty({n}, DType::kI32);
    for (int64_t i = 0; i < n; ++i) ids32.data<int32_t>()[i] = static_cast<int32_t>(ids.data<int64_t>()[i]);
    for (const Tensor* src : std::vector<const Tensor*>{&table, &half, &bf}) {
      Tensor x = Tensor::Empty({n, cols}, DType::kF32), y = Tensor::Empty({n, cols}, DType::kF32);
      ASSERT_OK(GatherRows(pools.ctx1, *src, ids, &x));
      ASSERT_OK(DropoutRows(pools.ctx1, 0.5f, x, ids, &y, nullptr));
      for (const ExecContext* ctx : {&pools.ctx1, &pools.ctx3}) {
        for (const Tensor* id : std::vector<const Tensor*>{&ids, &ids32}) {
          Tensor fy = Tensor::Empty({n, cols}, DType::kF32);
          ASSERT_OK(GatherRowsDropout(*ctx, 0.5f, *src, *id, &fy));
          EXPECT_TRUE(test::BitwiseEqual(y, fy))
              << DTypeName(src->dtype()) << " rows, " << DTypeName(id->dtype()) << " ids, " << cols << " columns";
        }
      }
    }
  }
}

TEST(FusedDropoutTest, BadArgumentsAreRefusedByName) {
  auto ctx = CpuContext();
  const Tensor table = RandomF32({10, 4}, 41);
  Tensor ids = Tensor::Empty({3}, DType::kI64);
  ids.data<int64_t>()[0] = 1;
  ids.data<int64_t>()[1] = 10;  // one past the table
  ids.data<int64_t>()[2] = 2;
  Tensor out = Tensor::Empty({3, 4}, DType::kF32), small = Tensor::Empty({2, 4}, DType::kF32);
  EXPECT_ERROR_CONTAINS(GatherRowsDropout(ctx, 0.5f, table, ids, &out), "GatherRowsDropout", "ids[1] = 10",
                        "out of range");
  ids.data<int64_t>()[1] = 3;
  EXPECT_ERROR_CONTAINS(GatherRowsDropout(ctx, 1.0f, table, ids, &out), "GatherRowsDropout", "p must be");
  EXPECT_ERROR_CONTAINS(GatherRowsDropout(ctx, 0.5f, table, ids, &small), "GatherRowsDropout: out");
  const Tensor x = RandomF32({3, 4}, 42);
  Tensor wrong_ids = Tensor::Empty({2}, DType::kI64);
  EXPECT_ERROR_CONTAINS(ReluDropoutRows(ctx, 0.5f, x, wrong_ids, &out, nullptr), "ReluDropoutRows: row_ids",
                        "one id per row");
  EXPECT_ERROR_CONTAINS(ReluDropoutRows(ctx, -0.1f, x, ids, &out, nullptr), "ReluDropoutRows", "p must be");
}

}  // namespace
}  // namespace foresight::kernels
