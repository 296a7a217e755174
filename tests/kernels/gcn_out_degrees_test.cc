// GcnOutDegrees and GcnNormalizeWithOutDegrees: a chunk of a graph (all
// in-edges of some destinations) normalised with the whole graph's
// out-degrees gets the whole graph's weights, bit for bit.
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

// A square graph with self loops on some rows (so both cases occur).
reference::RefCsr SquareGraph(int64_t n, uint64_t seed) {
  auto g = test::RandomRefCsr(n, n, 7, seed);
  for (int64_t v = 0; v < n; v += 4) {
    if (g.indptr[v + 1] > g.indptr[v]) g.indices[g.indptr[v + 1] - 1] = v;
  }
  return g;
}

TEST(GcnOutDegreesTest, CountsEdgesPlusAddedSelfLoops) {
  test::TwoPools pools;
  const auto g = SquareGraph(60, 5);
  for (DType idt : {DType::kI32, DType::kI64}) {
    const Csr csr = test::FromRef(g, idt);
    Tensor d1, d3;
    ASSERT_OK(GcnOutDegrees(pools.ctx1, csr, &d1));
    ASSERT_OK(GcnOutDegrees(pools.ctx3, csr, &d3));
    // Naive: count the sources of GcnNormalize's result.
    Csr normalized;
    ASSERT_OK(GcnNormalize(pools.ctx1, csr, &normalized));
    std::vector<int64_t> want(60, 0);
    for (int64_t u : test::IdsVec(normalized.indices)) ++want[static_cast<size_t>(u)];
    EXPECT_EQ(d1.dtype(), DType::kI64);
    EXPECT_EQ(test::IdsVec(d1), want);
    EXPECT_EQ(test::IdsVec(d3), want);
  }
}

TEST(GcnOutDegreesTest, ChunkWithWholeGraphDegreesMatchesWholeGraphBitwise) {
  test::TwoPools pools;
  const int64_t n = 80;
  const auto g = SquareGraph(n, 9);
  const Csr whole = test::FromRef(g, DType::kI32);
  Csr whole_norm;
  ASSERT_OK(GcnNormalize(pools.ctx1, whole, &whole_norm));
  Tensor degrees;
  ASSERT_OK(GcnOutDegrees(pools.ctx1, whole, &degrees));
  const std::vector<int64_t> all_deg = test::IdsVec(degrees);
  const std::vector<int64_t> wip = test::IdsVec(whole_norm.indptr);
  const std::vector<float> ww = test::ToVec(whole_norm.edge_weight);

  // A chunk: destinations 30, 5, 77, 12 with all their in-edges, relabelled
  // as a block (destinations first, then the other sources in first-seen
  // order).
  const std::vector<int64_t> dst = {30, 5, 77, 12};
  std::vector<int64_t> src_nodes = dst;
  std::unordered_map<int64_t, int64_t> local;
  for (size_t i = 0; i < dst.size(); ++i) local[dst[i]] = static_cast<int64_t>(i);
  reference::RefCsr block;
  block.indptr = {0};
  for (int64_t v : dst) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const int64_t u = g.indices[e];
      auto it = local.find(u);
      if (it == local.end()) {
        it = local.emplace(u, static_cast<int64_t>(src_nodes.size())).first;
        src_nodes.push_back(u);
      }
      block.indices.push_back(it->second);
    }
    block.indptr.push_back(static_cast<int64_t>(block.indices.size()));
  }
  block.num_src = static_cast<int64_t>(src_nodes.size());
  std::vector<int64_t> src_deg;
  for (int64_t u : src_nodes) src_deg.push_back(all_deg[static_cast<size_t>(u)]);

  for (DType idt : {DType::kI32, DType::kI64}) {
    Csr chunk_norm;
    ASSERT_OK(GcnNormalizeWithOutDegrees(pools.ctx3, test::FromRef(block, idt),
                                         test::IdsTensor(src_deg, DType::kI64), &chunk_norm));
    const std::vector<int64_t> cip = test::IdsVec(chunk_norm.indptr);
    const std::vector<int64_t> cidx = test::IdsVec(chunk_norm.indices);
    const std::vector<float> cw = test::ToVec(chunk_norm.edge_weight);
    const std::vector<int64_t> widx = test::IdsVec(whole_norm.indices);
    for (size_t i = 0; i < dst.size(); ++i) {
      const int64_t v = dst[i];
      ASSERT_EQ(cip[i + 1] - cip[i], wip[v + 1] - wip[v]) << "row of node " << v;
      for (int64_t k = 0; k < cip[i + 1] - cip[i]; ++k) {
        EXPECT_EQ(src_nodes[static_cast<size_t>(cidx[cip[i] + k])], widx[wip[v] + k]);
        // Bit for bit: the same degrees through the same formula.
        EXPECT_EQ(cw[cip[i] + k], ww[wip[v] + k]) << "node " << v << " edge " << k;
      }
    }
  }
}

TEST(GcnOutDegreesTest, ChecksTheDegrees) {
  reference::RefCsr g;
  g.num_src = 3;
  g.indptr = {0, 1, 2};
  g.indices = {2, 0};
  const Csr csr = test::FromRef(g, DType::kI64);
  Csr out;
  EXPECT_ERROR_CONTAINS(GcnNormalizeWithOutDegrees(CpuContext(), csr, test::IdsTensor({1, 1}, DType::kI64), &out),
                        "src_out_degree must be a contiguous i64 [3]", "[2]");
  EXPECT_ERROR_CONTAINS(GcnNormalizeWithOutDegrees(CpuContext(), csr, test::IdsTensor({1, 1, 1}, DType::kI32), &out),
                        "src_out_degree must be a contiguous i64 [3]", "i32");
  EXPECT_ERROR_CONTAINS(GcnNormalizeWithOutDegrees(CpuContext(), csr, test::IdsTensor({2, 1, 0}, DType::kI64), &out),
                        "source 2 (read by row 0) has out-degree 0; it must be >= 1");
  Tensor d;
  reference::RefCsr wide;
  wide.num_src = 1;
  wide.indptr = {0, 0, 0};
  EXPECT_ERROR_CONTAINS(GcnOutDegrees(CpuContext(), test::FromRef(wide, DType::kI64), &d),
                        "GcnOutDegrees: csr has 2 destinations but only 1 sources");
}

}  // namespace
}  // namespace foresight::kernels
