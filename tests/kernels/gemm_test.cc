#include <filesystem>
#include <memory>
#include <vector>

#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

using test::ExpectClose;
using test::RandomF32;
using test::ToDouble;
using test::ToVec;

struct GemmCase {
  int64_t m, n, k;
  bool ta, tb;
  float alpha, beta;
};

TEST(GemmTest, MatchesReferenceAllTransposes) {
  test::TwoPools pools;
  const GemmCase cases[] = {
      {7, 5, 3, false, false, 1.0f, 0.0f},    {33, 17, 9, true, false, 0.5f, 1.0f},
      {65, 300, 40, false, true, 1.0f, 0.5f}, {600, 70, 129, true, true, -2.0f, 0.25f},
      {1, 1, 1, false, false, 1.0f, 0.0f},    {3000, 130, 64, false, false, 1.0f, 0.0f},
      {5, 600, 7, false, true, 1.0f, 1.0f},
      // Large enough that the tiles grow (128 rows x 512 columns, ragged
      // edges): still one BLAS call per element of c.
      {2100, 1100, 96, true, false, 1.0f, 0.5f},
  };
  uint64_t seed = 1;
  for (const GemmCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.m << "x" << c.n << "x" << c.k << " ta=" << c.ta << " tb=" << c.tb);
    Tensor a = RandomF32(c.ta ? Shape{c.k, c.m} : Shape{c.m, c.k}, seed++);
    Tensor b = RandomF32(c.tb ? Shape{c.n, c.k} : Shape{c.k, c.n}, seed++);
    Tensor c0 = RandomF32({c.m, c.n}, seed++);
    Tensor c1 = c0.Clone(), c3 = c0.Clone();
    ASSERT_OK(Gemm(pools.ctx1, a, c.ta, b, c.tb, c.alpha, c.beta, &c1));
    ASSERT_OK(Gemm(pools.ctx3, a, c.ta, b, c.tb, c.alpha, c.beta, &c3));
    EXPECT_TRUE(test::BitwiseEqual(c1, c3)) << "Gemm depends on the thread count";
    const auto want = reference::Gemm<double>(ToDouble(a), c.ta, ToDouble(b), c.tb, c.m, c.n, c.k, c.alpha, c.beta,
                                              ToDouble(c0));
    ExpectClose(ToVec(c1), want, 1e-4, 1e-4 * c.k, "Gemm");
  }
}

// The tiles grow with the pool (two a thread), so the same product is cut
// into different blocks at each thread count; every element must still be
// the same bits. Shapes of the DLRM step (batch 2048; forward, dX and dW of
// 415 -> 512 and 512 -> 256, a k = 13 first layer) and of a GNN layer, with
// ragged edges, beta 0 and 1.
TEST(GemmTest, SameBitsAtEveryThreadCount) {
  const GemmCase cases[] = {
      {2048, 512, 415, false, false, 1.0f, 0.0f}, {2048, 415, 512, false, true, 1.0f, 0.0f},
      {415, 512, 2048, true, false, 1.0f, 0.0f},  {2048, 256, 512, false, false, 1.0f, 1.0f},
      {2048, 512, 13, false, false, 1.0f, 0.0f},  {13, 512, 2048, true, false, 1.0f, 1.0f},
      {3001, 256, 602, false, false, 1.0f, 0.0f}, {1000, 47, 256, false, true, 1.0f, 0.0f},
      // GraphSAGE's products (hidden 256 over 128 features; 16 classes).
      {1537, 256, 128, false, false, 1.0f, 0.0f}, {1537, 128, 256, false, true, 1.0f, 0.0f},
      {128, 256, 1537, true, false, 1.0f, 0.0f},  {1024, 16, 256, false, false, 1.0f, 1.0f},
  };
  std::vector<std::unique_ptr<ThreadPool>> pools;
  for (int t : {1, 2, 3, 4, 16}) pools.push_back(std::make_unique<ThreadPool>(t));
  uint64_t seed = 100;
  for (const GemmCase& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.m << "x" << c.n << "x" << c.k << " ta=" << c.ta << " tb=" << c.tb);
    Tensor a = RandomF32(c.ta ? Shape{c.k, c.m} : Shape{c.m, c.k}, seed++);
    Tensor b = RandomF32(c.tb ? Shape{c.n, c.k} : Shape{c.k, c.n}, seed++);
    Tensor c0 = RandomF32({c.m, c.n}, seed++);
    Tensor first;
    for (const auto& pool : pools) {
      Tensor out = c0.Clone();
      ASSERT_OK(Gemm(CpuContext(7, pool.get()), a, c.ta, b, c.tb, c.alpha, c.beta, &out));
      if (!first.defined()) {
        first = out;
        continue;
      }
      EXPECT_TRUE(test::BitwiseEqual(first, out)) << "Gemm differs at " << pool->num_threads() << " threads";
    }
  }
}

// oneDNN's sgemm runs on an OpenMP team; every call must stay on its pool
// thread (sgemm.cc sets each thread's team to one), or each pool thread
// would start a team of one thread a core beside the pool's own.
TEST(GemmTest, StartsNoThreadsOfItsOwn) {
  ThreadPool pool(2);
  DefaultThreadPool();  // its workers start before the count
  const auto threads = [] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) n += e.is_directory() ? 1 : 0;
    return n;
  };
  Tensor a = RandomF32({2048, 512}, 1), b = RandomF32({512, 256}, 2);
  Tensor out = Tensor::Empty({2048, 256}, DType::kF32);
  const int before = threads();
  ASSERT_OK(Gemm(CpuContext(7, &pool), a, false, b, false, 1.0f, 0.0f, &out));
  ASSERT_OK(Gemm(CpuContext(7), a, false, b, false, 1.0f, 0.0f, &out));  // the default pool too
  EXPECT_EQ(threads(), before);
}

TEST(GemmTest, BetaZeroOverwritesNaNAndKZeroScales) {
  auto ctx = CpuContext();
  Tensor a = RandomF32({4, 3}, 1), b = RandomF32({3, 5}, 2);
  Tensor c = Tensor::Empty({4, 5}, DType::kF32);
  ASSERT_OK(c.Fill(NAN));
  ASSERT_OK(Gemm(ctx, a, false, b, false, 1.0f, 0.0f, &c));
  for (float v : ToVec(c)) EXPECT_FALSE(std::isnan(v));

  Tensor a0 = Tensor::Empty({4, 0}, DType::kF32), b0 = Tensor::Empty({0, 5}, DType::kF32);
  Tensor c2 = RandomF32({4, 5}, 3);
  const auto before = ToVec(c2);
  ASSERT_OK(Gemm(ctx, a0, false, b0, false, 1.0f, 2.0f, &c2));
  const auto after = ToVec(c2);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], 2.0f * before[i]);
  ASSERT_OK(c2.Fill(NAN));
  ASSERT_OK(Gemm(ctx, a0, false, b0, false, 1.0f, 0.0f, &c2));
  for (float v : ToVec(c2)) EXPECT_EQ(v, 0.0f);
}

TEST(GemmTest, StridedRowViews) {
  auto ctx = CpuContext();
  // a is columns [2, 2+k) of a wider matrix; c is the first rows of a taller one.
  Tensor wide = RandomF32({50, 20}, 4);
  Tensor a = wide.Slice(1, 2, 12);  // [50, 10], row stride 20
  Tensor b = RandomF32({10, 6}, 5);
  Tensor tall = Tensor::Zeros({60, 9}, DType::kF32);
  Tensor c = tall.Slice(1, 1, 7).Slice(0, 0, 50);  // [50, 6], row stride 9
  ASSERT_OK(Gemm(ctx, a, false, b, false, 1.0f, 0.0f, &c));
  ASSERT_OK_AND_ASSIGN(Tensor ac, a.Contiguous());
  ASSERT_OK_AND_ASSIGN(Tensor cc, c.Contiguous());
  const auto want = reference::Gemm<double>(ToDouble(ac), false, ToDouble(b), false, 50, 6, 10, 1.0, 0.0,
                                            std::vector<double>(300, 0.0));
  ExpectClose(ToVec(cc), want, 1e-5, 1e-5, "strided Gemm");
  // Column 0 of `tall` was not written.
  for (int64_t r = 0; r < 60; ++r) EXPECT_EQ(tall.data<float>()[r * 9], 0.0f);
}

TEST(GemmTest, ErrorsNameTheProblem) {
  auto ctx = CpuContext();
  Tensor a = RandomF32({4, 3}, 1), b = RandomF32({4, 5}, 2), c = Tensor::Empty({4, 5}, DType::kF32);
  EXPECT_ERROR_CONTAINS(Gemm(ctx, a, false, b, false, 1, 0, &c), "inner dimensions differ", "[4, 3]", "[4, 5]");
  Tensor b2 = RandomF32({3, 5}, 2), cbad = Tensor::Empty({5, 5}, DType::kF32);
  EXPECT_ERROR_CONTAINS(Gemm(ctx, a, false, b2, false, 1, 0, &cbad), "Gemm: c", "[4, 5]", "[5, 5]");
  Tensor ai = Tensor::Zeros({4, 3}, DType::kI32);
  EXPECT_ERROR_CONTAINS(Gemm(ctx, ai, false, b2, false, 1, 0, &c), "Gemm: a", "f32", "i32");
  EXPECT_ERROR_CONTAINS(Gemm(ctx, a.Transpose(0, 1), false, b2, false, 1, 0, &c), "Gemm: a", "unit stride");
  EXPECT_ERROR_CONTAINS(Gemm(ctx, a, false, b2, false, 1, 0, nullptr), "c is null");
}

// Gemm is its own backward: for L = sum(R * (A @ B)), dA = R @ B^T and
// dB = A^T @ R. Checked against central differences of a double forward.
TEST(GemmTest, GradientThroughItsOwnBackward) {
  auto ctx = CpuContext();
  const int64_t m = 6, k = 5, n = 4;
  Tensor a = RandomF32({m, k}, 11), b = RandomF32({k, n}, 12);
  const std::vector<double> r = test::RandomWeights(m * n, 13);
  Tensor rt = Tensor::Empty({m, n}, DType::kF32);
  for (int64_t i = 0; i < m * n; ++i) rt.data<float>()[i] = static_cast<float>(r[i]);
  Tensor da = Tensor::Empty({m, k}, DType::kF32), db = Tensor::Empty({k, n}, DType::kF32);
  ASSERT_OK(Gemm(ctx, rt, false, b, true, 1.0f, 0.0f, &da));
  ASSERT_OK(Gemm(ctx, a, true, rt, false, 1.0f, 0.0f, &db));
  std::vector<double> rd(r.begin(), r.end());
  for (double& v : rd) v = static_cast<float>(v);
  auto loss_a = [&](const std::vector<double>& av) {
    return test::Dot(reference::Gemm<double>(av, false, ToDouble(b), false, m, n, k, 1, 0,
                                             std::vector<double>(m * n)), rd);
  };
  auto loss_b = [&](const std::vector<double>& bv) {
    return test::Dot(reference::Gemm<double>(ToDouble(a), false, bv, false, m, n, k, 1, 0,
                                             std::vector<double>(m * n)), rd);
  };
  std::vector<size_t> ca, cb;
  const auto na = test::NumericGrad(loss_a, ToDouble(a), 1e-3, 1, &ca);
  const auto nb = test::NumericGrad(loss_b, ToDouble(b), 1e-3, 1, &cb);
  test::ExpectGradClose(ToVec(da), na, ca, 1e-4, 1e-5, "dA");
  test::ExpectGradClose(ToVec(db), nb, cb, 1e-4, 1e-5, "dB");
}

}  // namespace
}  // namespace foresight::kernels
