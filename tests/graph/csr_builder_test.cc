// CsrBuilder: the external-memory path (a tiny budget forcing many spilled
// runs) must equal a naive in-memory construction for every flag combination.
#include "foresight/graph/csr_builder.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "foresight/core/rng.h"
#include "foresight/storage/npy.h"
#include "testing/testing.h"

namespace foresight::graph {
namespace {

using testing::TempDir;

struct Csr {
  std::vector<int64_t> indptr;
  std::vector<int64_t> indices;
};

// The naive reference: symmetrise, drop, sort by (dst, src), dedup, count.
Csr Reference(const std::vector<std::pair<int64_t, int64_t>>& edges, int64_t n, bool undirected,
              bool keep_self, bool keep_dup) {
  std::vector<std::pair<int64_t, int64_t>> e;  // (dst, src)
  for (auto [u, v] : edges) {
    if (u == v && !keep_self) continue;
    e.push_back({v, u});
    if (undirected && u != v) e.push_back({u, v});
  }
  std::sort(e.begin(), e.end());
  if (!keep_dup) e.erase(std::unique(e.begin(), e.end()), e.end());
  Csr c;
  c.indptr.assign(n + 1, 0);
  for (auto [d, s] : e) {
    c.indptr[d + 1]++;
    c.indices.push_back(s);
  }
  for (int64_t i = 0; i < n; ++i) c.indptr[i + 1] += c.indptr[i];
  return c;
}

std::vector<int64_t> ToVector(const Tensor& t) {
  std::vector<int64_t> v(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    v[i] = t.dtype() == DType::kI32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  }
  return v;
}

std::vector<std::pair<int64_t, int64_t>> RandomEdges(int64_t n, int64_t m, uint64_t seed) {
  RngKey key = RngKey::FromSeed(seed);
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t i = 0; i < m; ++i) {
    // Skewed draws so duplicates and self loops are common.
    const int64_t u = static_cast<int64_t>(key.Below(static_cast<uint64_t>(n), i, 0));
    const int64_t v = static_cast<int64_t>(key.Below(static_cast<uint64_t>(n) / 4 + 1, i, 1));
    edges.push_back({u, v});
  }
  return edges;
}

class CsrBuilderTest : public ::testing::TestWithParam<std::tuple<bool, bool, bool>> {};

TEST_P(CsrBuilderTest, TinyBudgetEqualsReference) {
  const auto [undirected, keep_self, keep_dup] = GetParam();
  const int64_t n = 300;
  const auto edges = RandomEdges(n, 20000, 7);
  TempDir dir;
  CsrBuildOptions opt;
  opt.memory_budget_bytes = 1;  // clamps to the minimum run: many runs
  opt.temp_dir = dir.path();
  opt.undirected = undirected;
  opt.keep_self_loops = keep_self;
  opt.keep_duplicates = keep_dup;
  ASSERT_OK_AND_ASSIGN(auto builder, CsrBuilder::Create(opt));
  for (auto [u, v] : edges) ASSERT_OK(builder->Add(u, v));
  ASSERT_OK(builder->Finish(n, dir.File("indptr.npy"), dir.File("indices.npy")));
  EXPECT_GE(builder->stats().num_runs, 10);

  const Csr ref = Reference(edges, n, undirected, keep_self, keep_dup);
  ASSERT_OK_AND_ASSIGN(Tensor indptr, storage::LoadNpy(dir.File("indptr.npy")));
  ASSERT_OK_AND_ASSIGN(Tensor indices, storage::LoadNpy(dir.File("indices.npy")));
  EXPECT_EQ(indptr.dtype(), DType::kI64);
  EXPECT_EQ(indices.dtype(), DType::kI32);
  EXPECT_EQ(ToVector(indptr), ref.indptr);
  EXPECT_EQ(ToVector(indices), ref.indices);
  EXPECT_EQ(builder->stats().num_edges, static_cast<int64_t>(ref.indices.size()));
  EXPECT_EQ(builder->stats().input_edges, 20000);

  // The same edges with the default budget (one in-memory run) agree too.
  CsrBuildOptions big = opt;
  big.memory_budget_bytes = size_t{64} << 20;
  ASSERT_OK_AND_ASSIGN(auto b2, CsrBuilder::Create(big));
  for (auto [u, v] : edges) ASSERT_OK(b2->Add(u, v));
  ASSERT_OK(b2->Finish(n, dir.File("p2.npy"), dir.File("i2.npy")));
  EXPECT_EQ(b2->stats().num_runs, 0);
  EXPECT_EQ(testing::ReadFile(dir.File("indices.npy")), testing::ReadFile(dir.File("i2.npy")));
  EXPECT_EQ(testing::ReadFile(dir.File("indptr.npy")), testing::ReadFile(dir.File("p2.npy")));
  EXPECT_EQ(b2->stats().duplicates_dropped, builder->stats().duplicates_dropped);
  EXPECT_EQ(b2->stats().self_loops_dropped, builder->stats().self_loops_dropped);
}

INSTANTIATE_TEST_SUITE_P(Flags, CsrBuilderTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(), ::testing::Bool()));

TEST(CsrBuilder, LargeSortAcrossChunksEqualsReference) {
  // More than one sort grain (2^18) in a single run exercises the merge rounds.
  const int64_t n = 5000;
  const auto edges = RandomEdges(n, 700000, 11);
  TempDir dir;
  CsrBuildOptions opt;
  opt.temp_dir = dir.path();
  ASSERT_OK_AND_ASSIGN(auto builder, CsrBuilder::Create(opt));
  for (auto [u, v] : edges) ASSERT_OK(builder->Add(u, v));
  ASSERT_OK(builder->Finish(n, dir.File("indptr.npy"), dir.File("indices.npy")));
  const Csr ref = Reference(edges, n, false, false, false);
  ASSERT_OK_AND_ASSIGN(Tensor indptr, storage::LoadNpy(dir.File("indptr.npy")));
  ASSERT_OK_AND_ASSIGN(Tensor indices, storage::LoadNpy(dir.File("indices.npy")));
  EXPECT_EQ(ToVector(indptr), ref.indptr);
  EXPECT_EQ(ToVector(indices), ref.indices);
}

TEST(CsrBuilder, IsolatedNodesAndEmptyGraph) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto b, CsrBuilder::Create({}));
  ASSERT_OK(b->Add(0, 3));
  ASSERT_OK(b->Finish(6, dir.File("p.npy"), dir.File("i.npy")));
  ASSERT_OK_AND_ASSIGN(Tensor indptr, storage::LoadNpy(dir.File("p.npy")));
  EXPECT_EQ(ToVector(indptr), (std::vector<int64_t>{0, 0, 0, 0, 1, 1, 1}));

  ASSERT_OK_AND_ASSIGN(auto e, CsrBuilder::Create({}));
  ASSERT_OK(e->Finish(0, dir.File("p0.npy"), dir.File("i0.npy")));
  ASSERT_OK_AND_ASSIGN(Tensor p0, storage::LoadNpy(dir.File("p0.npy")));
  EXPECT_EQ(ToVector(p0), (std::vector<int64_t>{0}));
}

TEST(CsrBuilder, RejectsIdsOutOfRangeAndNegative) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto b, CsrBuilder::Create({}));
  EXPECT_ERROR_CONTAINS(b->Add(-1, 2), "negative node id");
  ASSERT_OK(b->Add(1, 9));
  EXPECT_ERROR_CONTAINS(b->Finish(5, dir.File("p.npy"), dir.File("i.npy")), "node 9", "[0, 5)");
}

// Bytes the caller holds come off the buffer (32 bytes an edge), down to the
// minimum run; charging after the first edge is refused, since the buffer
// may already be larger.
TEST(CsrBuilderCharge, HeldBytesShrinkTheRun) {
  TempDir dir;
  CsrBuildOptions opt;
  opt.memory_budget_bytes = 1 << 20;
  opt.temp_dir = dir.path();
  ASSERT_OK_AND_ASSIGN(auto builder, CsrBuilder::Create(opt));
  EXPECT_EQ(builder->run_capacity(), 32768);
  ASSERT_OK(builder->ChargeHeldBytes(512 << 10));
  EXPECT_EQ(builder->run_capacity(), 16384);
  ASSERT_OK(builder->ChargeHeldBytes(1 << 20));  // more than the budget: the minimum run
  EXPECT_EQ(builder->run_capacity(), 1024);
  ASSERT_OK(builder->Add(0, 1));
  testing::ExpectErrorContains(builder->ChargeHeldBytes(1), "ChargeHeldBytes after the first edge",
                               {"after the first edge"});
}

}  // namespace
}  // namespace foresight::graph
