#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

using reference::RefReduce;
using test::RandomF32;
using test::ToDouble;
using test::ToVec;

RefReduce ToRefReduce(Reduce r) {
  return r == Reduce::kSum ? RefReduce::kSum : r == Reduce::kMean ? RefReduce::kMean : RefReduce::kMax;
}

// Distinct values (a shuffled grid) so max has no near-ties, even after a
// finite-difference step.
Tensor DistinctValues(const Shape& shape, uint64_t seed) {
  Tensor t = Tensor::Empty(shape, DType::kF32);
  std::vector<int64_t> order(static_cast<size_t>(t.numel()));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = -1.0f + 0.01f * static_cast<float>(order[i]);
  return t;
}

struct SpmmCase {
  Reduce reduce;
  bool weighted;
  DType idx;
};

const SpmmCase kCases[] = {
    {Reduce::kSum, false, DType::kI32}, {Reduce::kSum, true, DType::kI64}, {Reduce::kMean, false, DType::kI64},
    {Reduce::kMax, false, DType::kI32}, {Reduce::kMax, false, DType::kI64},
};

TEST(SpmmTest, ForwardAndBackwardMatchReference) {
  test::TwoPools pools;
  const int64_t num_dst = 300, num_src = 700;
  for (const SpmmCase& c : kCases) {
    for (int64_t f : {int64_t{1}, int64_t{37}, int64_t{128}}) {
      SCOPED_TRACE(::testing::Message() << ReduceName(c.reduce) << " weighted=" << c.weighted << " f=" << f);
      const auto g = test::RandomRefCsr(num_dst, num_src, 12, 10 + f, c.weighted);
      Csr csr = test::FromRef(g, c.idx);
      Csr csr_t;
      Tensor perm;
      ASSERT_OK(TransposeCsr(pools.ctx1, csr, &csr_t, &perm));
      Tensor x = DistinctValues({num_src, f}, 20 + f);
      Tensor out1 = Tensor::Empty({num_dst, f}, DType::kF32), out3 = Tensor::Empty({num_dst, f}, DType::kF32);
      Tensor am1, am3;
      Tensor* am1p = nullptr;
      Tensor* am3p = nullptr;
      if (c.reduce == Reduce::kMax) {
        am1 = Tensor::Empty({num_dst, f}, DType::kI64);
        am3 = Tensor::Empty({num_dst, f}, DType::kI64);
        am1p = &am1;
        am3p = &am3;
      }
      ASSERT_OK(Spmm(pools.ctx1, csr, c.reduce, x, &out1, am1p));
      ASSERT_OK(Spmm(pools.ctx3, csr, c.reduce, x, &out3, am3p));
      EXPECT_TRUE(test::BitwiseEqual(out1, out3));
      std::vector<int64_t> want_am;
      const auto want = reference::Spmm<double>(g, ToRefReduce(c.reduce), ToDouble(x), f, &want_am);
      test::ExpectClose(ToVec(out1), want, 1e-5, 1e-5, "Spmm");
      if (c.reduce == Reduce::kMax) {
        EXPECT_EQ(test::IdsVec(am1), want_am);
        EXPECT_TRUE(test::BitwiseEqual(am1, am3));
      }

      Tensor go = RandomF32({num_dst, f}, 30 + f);
      Tensor gx1 = Tensor::Empty({num_src, f}, DType::kF32), gx3 = Tensor::Empty({num_src, f}, DType::kF32);
      ASSERT_OK(SpmmBackward(pools.ctx1, csr, csr_t, perm, c.reduce, go, am1, &gx1));
      ASSERT_OK(SpmmBackward(pools.ctx3, csr, csr_t, perm, c.reduce, go, am1, &gx3));
      EXPECT_TRUE(test::BitwiseEqual(gx1, gx3));
      const auto want_g = reference::SpmmBackward<double>(g, ToRefReduce(c.reduce), ToDouble(go), f, want_am);
      test::ExpectClose(ToVec(gx1), want_g, 1e-5, 1e-5, "SpmmBackward");
      if (c.reduce == Reduce::kMax) {
        // Max backward gathers in the serial scatter's order: bitwise equal.
        const auto want_f = reference::SpmmBackward<float>(g, RefReduce::kMax, ToVec(go), f, want_am);
        EXPECT_EQ(ToVec(gx1), want_f);
      }
    }
  }
}

TEST(SpmmTest, EmptyRowsGiveZeroAndArgmaxMinusOne) {
  auto ctx = CpuContext();
  reference::RefCsr g;
  g.num_src = 3;
  g.indptr = {0, 0, 2, 2};
  g.indices = {2, 2};  // a repeated edge
  Csr csr = test::FromRef(g, DType::kI64);
  Tensor x = RandomF32({3, 4}, 1);
  for (Reduce r : {Reduce::kSum, Reduce::kMean, Reduce::kMax}) {
    Tensor out = Tensor::Empty({3, 4}, DType::kF32);
    ASSERT_OK(out.Fill(7.0));
    Tensor am = Tensor::Empty({3, 4}, DType::kI64);
    ASSERT_OK(Spmm(ctx, csr, r, x, &out, r == Reduce::kMax ? &am : nullptr));
    for (int64_t j = 0; j < 4; ++j) {
      EXPECT_EQ(out.data<float>()[j], 0.0f);
      EXPECT_EQ(out.data<float>()[8 + j], 0.0f);
      const float xv = x.data<float>()[8 + j];
      EXPECT_FLOAT_EQ(out.data<float>()[4 + j], r == Reduce::kSum ? 2 * xv : xv);
      if (r == Reduce::kMax) {
        EXPECT_EQ(am.data<int64_t>()[j], -1);
        EXPECT_EQ(am.data<int64_t>()[4 + j], 2);
      }
    }
    if (r == Reduce::kMax) {
      // A repeated edge routes the gradient once, to the winning source.
      Csr t;
      Tensor perm;
      ASSERT_OK(TransposeCsr(ctx, csr, &t, &perm));
      Tensor go = Tensor::Empty({3, 4}, DType::kF32);
      ASSERT_OK(go.Fill(1.0));
      Tensor gx = Tensor::Empty({3, 4}, DType::kF32);
      ASSERT_OK(SpmmBackward(ctx, csr, t, perm, r, go, am, &gx));
      for (int64_t j = 0; j < 4; ++j) {
        EXPECT_EQ(gx.data<float>()[j], 0.0f);
        EXPECT_EQ(gx.data<float>()[8 + j], 1.0f);
      }
    }
  }
}

// Sum and mean start each destination from +0 and add its sources in edge
// order, bit for bit a serial float loop: in particular a column whose
// terms are all -0 sums to +0 (0 + -0), not -0, which a kernel that copies
// the first term instead of adding it to zero would give. The backward's
// gradient rows start from +0 the same way.
TEST(SpmmTest, SumsStartFromPositiveZeroInEdgeOrder) {
  test::TwoPools pools;
  const int64_t num_dst = 60, num_src = 90, f = 16;
  const auto g = test::RandomRefCsr(num_dst, num_src, 6, 3);
  Csr csr = test::FromRef(g, DType::kI64);
  Csr csr_t;
  Tensor perm;
  ASSERT_OK(TransposeCsr(pools.ctx1, csr, &csr_t, &perm));
  Tensor x = RandomF32({num_src, f}, 2);
  Tensor go = RandomF32({num_dst, f}, 3);
  for (int64_t u = 0; u < num_src; ++u) x.data<float>()[u * f] = -0.0f;  // column 0: all -0
  for (int64_t v = 0; v < num_dst; ++v) go.data<float>()[v * f] = -0.0f;
  for (Reduce r : {Reduce::kSum, Reduce::kMean}) {
    SCOPED_TRACE(ReduceName(r));
    for (const ExecContext* ctx : {&pools.ctx1, &pools.ctx3}) {
      Tensor out = Tensor::Empty({num_dst, f}, DType::kF32);
      ASSERT_OK(Spmm(*ctx, csr, r, x, &out, nullptr));
      for (int64_t v = 0; v < num_dst; ++v) {
        const int64_t e0 = g.indptr[v], e1 = g.indptr[v + 1];
        for (int64_t j = 0; j < f; ++j) {
          float want = 0.0f;
          for (int64_t e = e0; e < e1; ++e) want += x.data<float>()[g.indices[e] * f + j];
          if (r == Reduce::kMean && e1 > e0) want /= static_cast<float>(e1 - e0);
          const float got = out.data<float>()[v * f + j];
          ASSERT_EQ(std::memcmp(&got, &want, sizeof(float)), 0) << "dst " << v << " column " << j << ": got " << got
                                                                << " (signbit " << std::signbit(got) << "), want "
                                                                << want;
        }
      }
      Tensor gx = Tensor::Empty({num_src, f}, DType::kF32);
      ASSERT_OK(SpmmBackward(*ctx, csr, csr_t, perm, r, go, Tensor(), &gx));
      for (int64_t u = 0; u < num_src; ++u) {
        const float got = gx.data<float>()[u * f];
        EXPECT_EQ(got, 0.0f) << "source " << u;
        EXPECT_FALSE(std::signbit(got)) << "source " << u << ": its gradient's column 0 (all -0 terms) is -0";
      }
    }
  }
}

TEST(SpmmTest, MaxTiesGoToTheFirstEdge) {
  auto ctx = CpuContext();
  reference::RefCsr g;
  g.num_src = 3;
  g.indptr = {0, 3};
  g.indices = {2, 0, 1};
  Tensor x = Tensor::Empty({3, 2}, DType::kF32);
  const float v[] = {5, 1, 5, 2, 5, 0};  // column 0 ties everywhere
  std::copy(v, v + 6, x.data<float>());
  Tensor out = Tensor::Empty({1, 2}, DType::kF32), am = Tensor::Empty({1, 2}, DType::kI64);
  ASSERT_OK(Spmm(ctx, test::FromRef(g, DType::kI32), Reduce::kMax, x, &out, &am));
  EXPECT_EQ(am.data<int64_t>()[0], 2);  // first edge in CSR order
  EXPECT_EQ(am.data<int64_t>()[1], 1);
  EXPECT_EQ(out.data<float>()[1], 2.0f);
}

// Finite-difference checks of d sum(R * Spmm(x)) / dx (and / d weights for
// the weighted sum, through the same backward with x and grad swapped).
TEST(SpmmTest, GradientMatchesFiniteDifferences) {
  auto ctx = CpuContext();
  const int64_t num_dst = 12, num_src = 20, f = 3;
  for (const SpmmCase& c : kCases) {
    SCOPED_TRACE(::testing::Message() << ReduceName(c.reduce) << " weighted=" << c.weighted);
    const auto g = test::RandomRefCsr(num_dst, num_src, 5, 99, c.weighted);
    Csr csr = test::FromRef(g, c.idx);
    Csr t;
    Tensor perm;
    ASSERT_OK(TransposeCsr(ctx, csr, &t, &perm));
    Tensor x = DistinctValues({num_src, f}, 5);
    Tensor out = Tensor::Empty({num_dst, f}, DType::kF32), am = Tensor::Empty({num_dst, f}, DType::kI64);
    ASSERT_OK(Spmm(ctx, csr, c.reduce, x, &out, c.reduce == Reduce::kMax ? &am : nullptr));
    const auto r = test::RandomWeights(num_dst * f, 6);
    Tensor go = Tensor::Empty({num_dst, f}, DType::kF32);
    for (int64_t i = 0; i < num_dst * f; ++i) go.data<float>()[i] = static_cast<float>(r[i]);
    const auto rg = ToDouble(go);
    Tensor gx = Tensor::Empty({num_src, f}, DType::kF32);
    ASSERT_OK(SpmmBackward(ctx, csr, t, perm, c.reduce, go, am, &gx));
    auto loss = [&](const std::vector<double>& xv) {
      return test::Dot(reference::Spmm<double>(g, ToRefReduce(c.reduce), xv, f), rg);
    };
    std::vector<size_t> checked;
    const auto num = test::NumericGrad(loss, ToDouble(x), 1e-3, 1, &checked);
    test::ExpectGradClose(ToVec(gx), num, checked, 1e-4, 1e-5, "d/dx");
  }
}

TEST(SpmmTest, ErrorsNameTheProblem) {
  auto ctx = CpuContext();
  Csr csr = test::RandomCsr(5, 8, 3, 1, DType::kI64, /*weighted=*/true);
  Tensor x = RandomF32({8, 4}, 1), out = Tensor::Empty({5, 4}, DType::kF32);
  EXPECT_ERROR_CONTAINS(Spmm(ctx, csr, Reduce::kMean, x, &out, nullptr),
                        "edge weights are only supported with reduce=sum", "mean");
  Csr plain = test::RandomCsr(5, 8, 3, 1);
  Tensor xbad = RandomF32({7, 4}, 1);
  EXPECT_ERROR_CONTAINS(Spmm(ctx, plain, Reduce::kSum, xbad, &out, nullptr), "Spmm: x", "[8, 4]", "[7, 4]");
  Tensor am = Tensor::Empty({5, 4}, DType::kI32);
  EXPECT_ERROR_CONTAINS(Spmm(ctx, plain, Reduce::kMax, x, &out, &am), "Spmm: argmax", "i64", "i32");
  Tensor am64 = Tensor::Empty({5, 4}, DType::kI64);
  EXPECT_ERROR_CONTAINS(Spmm(ctx, plain, Reduce::kSum, x, &out, &am64), "argmax is only produced by reduce=max");
  Tensor gx = Tensor::Empty({8, 4}, DType::kF32), go = RandomF32({5, 4}, 2);
  EXPECT_ERROR_CONTAINS(SpmmBackward(ctx, plain, plain, Tensor(), Reduce::kSum, go, Tensor(), &gx),
                        "csr_t is not the transpose of csr");
  Csr t;
  Tensor perm;
  ASSERT_OK(TransposeCsr(ctx, csr, &t, &perm));
  EXPECT_ERROR_CONTAINS(SpmmBackward(ctx, csr, t, Tensor(), Reduce::kSum, go, Tensor(), &gx),
                        "edge_perm (needed for edge weights)");
  EXPECT_ERROR_CONTAINS(SpmmBackward(ctx, plain, t, perm, Reduce::kMax, go, Tensor(), &gx),
                        "SpmmBackward: argmax", "undefined");
}

}  // namespace
}  // namespace foresight::kernels
