#include <random>
#include <vector>

#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

using test::RandomF32;
using test::ToDouble;
using test::ToVec;

std::vector<int64_t> RandomIds(int64_t n, int64_t range, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> ids(n);
  for (auto& v : ids) v = static_cast<int64_t>(rng() % static_cast<uint64_t>(range));
  return ids;
}

TEST(RowsTest, GatherRowsF32AndHalfTypes) {
  test::TwoPools pools;
  const int64_t rows = 100, f = 19, n = 2500;
  Tensor src = RandomF32({rows, f}, 1);
  for (DType idt : {DType::kI32, DType::kI64}) {
    const auto ids = RandomIds(n, rows, 2);
    Tensor id = test::IdsTensor(ids, idt);
    Tensor out1 = Tensor::Empty({n, f}, DType::kF32), out3 = Tensor::Empty({n, f}, DType::kF32);
    ASSERT_OK(GatherRows(pools.ctx1, src, id, &out1));
    ASSERT_OK(GatherRows(pools.ctx3, src, id, &out3));
    EXPECT_TRUE(test::BitwiseEqual(out1, out3));
    const auto vs = ToVec(src), vo = ToVec(out1);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < f; ++j) ASSERT_EQ(vo[i * f + j], vs[ids[i] * f + j]);
    }
  }
  // f16 and bf16 sources: same dtype copies bits, f32 output converts.
  Tensor h = Tensor::Empty({rows, f}, DType::kF16), bh = Tensor::Empty({rows, f}, DType::kBF16);
  for (int64_t i = 0; i < rows * f; ++i) {
    h.data<Half>()[i].bits = FloatToHalf(src.data<float>()[i]);
    bh.data<BFloat16>()[i].bits = FloatToBFloat16(src.data<float>()[i]);
  }
  const auto ids = RandomIds(50, rows, 3);
  Tensor id = test::IdsTensor(ids, DType::kI64);
  Tensor of = Tensor::Empty({50, f}, DType::kF32), ob = Tensor::Empty({50, f}, DType::kBF16);
  ASSERT_OK(GatherRows(pools.ctx3, h, id, &of));
  ASSERT_OK(GatherRows(pools.ctx3, bh, id, &ob));
  for (int64_t i = 0; i < 50; ++i) {
    for (int64_t j = 0; j < f; ++j) {
      ASSERT_EQ(of.data<float>()[i * f + j], HalfToFloat(h.data<Half>()[ids[i] * f + j].bits));
      ASSERT_EQ(ob.data<BFloat16>()[i * f + j].bits, bh.data<BFloat16>()[ids[i] * f + j].bits);
    }
  }
}

TEST(RowsTest, IndexAddRowsEqualsSerialLoopBitwise) {
  test::TwoPools pools;
  // Few destination rows (counting sort) and many (comparison sort).
  for (int64_t rows : {int64_t{40}, int64_t{200000}}) {
    SCOPED_TRACE(rows);
    const int64_t n = 3000, f = 13;
    // Few distinct ids (many repeats), or enough groups for several chunks.
    const auto ids = RandomIds(n, rows == 40 ? 40 : 20000, 4);
    Tensor src = RandomF32({n, f}, 5);
    Tensor d0 = RandomF32({rows, f}, 6);
    Tensor d1 = d0.Clone(), d3 = d0.Clone();
    for (DType idt : {DType::kI32, DType::kI64}) {
      Tensor a = d0.Clone(), b = d0.Clone();
      ASSERT_OK(IndexAddRows(pools.ctx1, src, test::IdsTensor(ids, idt), &a));
      ASSERT_OK(IndexAddRows(pools.ctx3, src, test::IdsTensor(ids, idt), &b));
      EXPECT_TRUE(test::BitwiseEqual(a, b));
      std::vector<float> want = ToVec(d0);
      reference::IndexAddRows<float>(ToVec(src), ids, f, &want);
      EXPECT_EQ(ToVec(a), want) << "differs from the serial loop";
    }
  }
}

// <Gather(x, ids), y> == <x, IndexAdd(y, ids)>: the two are adjoint.
TEST(RowsTest, GatherAndIndexAddAreAdjoint) {
  auto ctx = CpuContext();
  const int64_t rows = 30, f = 8, n = 200;
  const auto ids = RandomIds(n, rows, 7);
  Tensor x = RandomF32({rows, f}, 8), y = RandomF32({n, f}, 9);
  Tensor gx = Tensor::Empty({n, f}, DType::kF32), ay = Tensor::Zeros({rows, f}, DType::kF32);
  ASSERT_OK(GatherRows(ctx, x, test::IdsTensor(ids, DType::kI64), &gx));
  ASSERT_OK(IndexAddRows(ctx, y, test::IdsTensor(ids, DType::kI64), &ay));
  double lhs = 0, rhs = 0;
  for (int64_t i = 0; i < n * f; ++i) lhs += double(gx.data<float>()[i]) * y.data<float>()[i];
  for (int64_t i = 0; i < rows * f; ++i) rhs += double(x.data<float>()[i]) * ay.data<float>()[i];
  EXPECT_NEAR(lhs, rhs, 1e-4 * std::fabs(lhs) + 1e-4);
}

TEST(RowsTest, ErrorsNameThePosition) {
  auto ctx = CpuContext();
  Tensor src = RandomF32({10, 3}, 1), out = Tensor::Empty({3, 3}, DType::kF32);
  EXPECT_ERROR_CONTAINS(GatherRows(ctx, src, test::IdsTensor({1, 10, 2}, DType::kI64), &out),
                        "GatherRows: ids[1] = 10 is out of range [0, 10)");
  EXPECT_ERROR_CONTAINS(GatherRows(ctx, src, test::IdsTensor({1, 2, -1}, DType::kI32), &out), "ids[2] = -1");
  Tensor dst = Tensor::Zeros({5, 3}, DType::kF32), s3 = RandomF32({3, 3}, 2);
  EXPECT_ERROR_CONTAINS(IndexAddRows(ctx, s3, test::IdsTensor({0, 5, 1}, DType::kI64), &dst),
                        "IndexAddRows: ids[1] = 5 is out of range [0, 5)");
  EXPECT_ERROR_CONTAINS(IndexAddRows(ctx, s3, test::IdsTensor({0, 1}, DType::kI64), &dst), "expected 3 ids");
  Tensor dbad = Tensor::Zeros({5, 4}, DType::kF32);
  EXPECT_ERROR_CONTAINS(IndexAddRows(ctx, s3, test::IdsTensor({0, 1, 2}, DType::kI64), &dbad),
                        "IndexAddRows: dst", "[5, 3]", "[5, 4]");
  Tensor oi = Tensor::Empty({3, 3}, DType::kI32);
  EXPECT_ERROR_CONTAINS(GatherRows(ctx, src, test::IdsTensor({0, 1, 2}, DType::kI64), &oi), "GatherRows: out",
                        "f32", "i32");
  Tensor fid = Tensor::Zeros({3}, DType::kF32);
  EXPECT_ERROR_CONTAINS(GatherRows(ctx, src, fid, &out), "GatherRows: ids", "i32 or i64");
}

}  // namespace
}  // namespace foresight::kernels
