#include <vector>

#include "foresight/kernels/csr.h"
#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

TEST(CsrTest, TransposeMatchesReference) {
  auto ctx = CpuContext();
  for (DType idt : {DType::kI32, DType::kI64}) {
    const auto g = test::RandomRefCsr(57, 80, 6, 1, /*weighted=*/true);
    Csr csr = test::FromRef(g, idt);
    ASSERT_OK(ValidateCsr(csr, "csr"));
    Csr t;
    Tensor perm;
    ASSERT_OK(TransposeCsr(ctx, csr, &t, &perm));
    ASSERT_OK(ValidateCsr(t, "transpose"));
    std::vector<int64_t> want_perm;
    const auto want = reference::Transpose(g, &want_perm);
    const auto got = test::ToRef(t);
    EXPECT_EQ(t.indices.dtype(), idt);
    EXPECT_EQ(got.num_src, 57);
    EXPECT_EQ(got.indptr, want.indptr);
    EXPECT_EQ(got.indices, want.indices);
    EXPECT_EQ(test::IdsVec(perm), want_perm);
    EXPECT_EQ(got.weight, want.weight);
  }
}

TEST(CsrTest, TransposeOfEmptyGraph) {
  auto ctx = CpuContext();
  reference::RefCsr g;
  g.num_src = 4;
  g.indptr = {0, 0, 0};
  Csr t;
  Tensor perm;
  ASSERT_OK(TransposeCsr(ctx, test::FromRef(g, DType::kI64), &t, &perm));
  EXPECT_EQ(t.num_dst(), 4);
  EXPECT_EQ(t.num_src, 2);
  EXPECT_EQ(t.num_edges(), 0);
  EXPECT_EQ(perm.numel(), 0);
}

TEST(CsrTest, ValidateNamesTheProblem) {
  reference::RefCsr g;
  g.num_src = 3;
  g.indptr = {0, 2, 1, 3};
  g.indices = {0, 1, 2};
  EXPECT_ERROR_CONTAINS(ValidateCsr(test::FromRef(g, DType::kI64), "block"),
                        "block.indptr[2] = 1 is less than indptr[1] = 2");
  g.indptr = {0, 1, 2, 3};
  g.indices = {0, 3, 2};
  EXPECT_ERROR_CONTAINS(ValidateCsr(test::FromRef(g, DType::kI32), "block"),
                        "block.indices[1] = 3 is out of range [0, 3)");
  g.indices = {0, 1, 2};
  g.indptr = {1, 1, 2, 3};
  EXPECT_ERROR_CONTAINS(ValidateCsr(test::FromRef(g, DType::kI64), "block"), "block.indptr[0] = 1, expected 0");
  g.indptr = {0, 1, 2, 2};
  EXPECT_ERROR_CONTAINS(ValidateCsr(test::FromRef(g, DType::kI64), "block"), "indptr[3] = 2",
                        "number of edges 3");
  Csr c = test::FromRef(g, DType::kI64);
  c.indptr = test::IdsTensor({0, 1, 2, 3}, DType::kI32);
  EXPECT_ERROR_CONTAINS(ValidateCsr(c, "block"), "block.indptr", "i64", "i32");
  c = test::FromRef(g, DType::kI64);
  c.edge_weight = Tensor::Zeros({2}, DType::kF32);
  EXPECT_ERROR_CONTAINS(ValidateCsr(c, "block"), "block.edge_weight", "[3]", "[2]");
}

}  // namespace
}  // namespace foresight::kernels
