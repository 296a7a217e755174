#include <vector>

#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

TEST(GcnNormalizeTest, MatchesReferenceOnBlocksAndSquareGraphs) {
  test::TwoPools pools;
  for (DType idt : {DType::kI32, DType::kI64}) {
    for (auto dims : {std::pair<int64_t, int64_t>{40, 40}, {50, 300}}) {
      auto g = test::RandomRefCsr(dims.first, dims.second, 6, 3);
      // Give some rows a self loop already (in the middle of the row).
      for (int64_t v = 0; v < g.num_dst(); v += 3) {
        if (g.indptr[v + 1] > g.indptr[v]) g.indices[g.indptr[v]] = v;
      }
      Csr csr = test::FromRef(g, idt);
      Csr n1, n3;
      ASSERT_OK(GcnNormalize(pools.ctx1, csr, &n1));
      ASSERT_OK(GcnNormalize(pools.ctx3, csr, &n3));
      ASSERT_OK(ValidateCsr(n1, "normalized"));
      const auto want = reference::GcnNormalize(g);
      const auto got = test::ToRef(n1);
      EXPECT_EQ(n1.indices.dtype(), idt);
      EXPECT_EQ(got.num_src, want.num_src);
      EXPECT_EQ(got.indptr, want.indptr);
      EXPECT_EQ(got.indices, want.indices);
      test::ExpectClose(test::ToVec(n1.edge_weight), want.weight, 1e-6, 0, "edge_weight");
      EXPECT_TRUE(test::BitwiseEqual(n1.edge_weight, n3.edge_weight));
    }
  }
}

TEST(GcnNormalizeTest, HandWorkedExample) {
  // dst 0 <- {1}, dst 1 <- {1, 0}; 3 sources. Result: 0 <- {1, 0 (added)},
  // 1 <- {1, 0}. deg_in = 2, 2; deg_out: src0 = 2, src1 = 2, src2 = 0.
  reference::RefCsr g;
  g.num_src = 3;
  g.indptr = {0, 1, 3};
  g.indices = {1, 1, 0};
  Csr out;
  ASSERT_OK(GcnNormalize(CpuContext(), test::FromRef(g, DType::kI64), &out));
  EXPECT_EQ(test::IdsVec(out.indptr), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(test::IdsVec(out.indices), (std::vector<int64_t>{1, 0, 1, 0}));
  for (float w : test::ToVec(out.edge_weight)) EXPECT_FLOAT_EQ(w, 0.5f);
}

TEST(GcnNormalizeTest, RejectsFewerSourcesThanDestinations) {
  Csr csr = test::RandomCsr(5, 3, 2, 1);
  Csr out;
  EXPECT_ERROR_CONTAINS(GcnNormalize(CpuContext(), csr, &out), "5 destinations but only 3 sources");
}

}  // namespace
}  // namespace foresight::kernels
