// kernels::SampleNeighbors: subset / distinctness / count, fanout -1 and
// fanout >= degree (all neighbours in CSR order), thread-count and
// seed-position independence, uniformity of inclusion, and the errors; with
// a source mask: a naive reference, only allowed sources, an all-ones mask
// giving the unmasked bits, thread counts, uniformity over the allowed
// neighbours, and the mask's errors.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/thread_pool.h"
#include "foresight/kernels/ops.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

Tensor I64(const std::vector<int64_t>& v) { return testing::TensorOf(v); }

// `n` seeds drawn uniformly (with repeats) from [0, below).
std::vector<int64_t> RandomSeeds(int64_t n, int64_t below, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> seeds(static_cast<size_t>(n));
  for (auto& s : seeds) s = static_cast<int64_t>(rng() % static_cast<uint64_t>(below));
  return seeds;
}

Tensor ToDType(const std::vector<int64_t>& v, DType dtype) {
  if (dtype == DType::kI64) return I64(v);
  Tensor t = Tensor::Empty({static_cast<int64_t>(v.size())}, DType::kI32);
  for (size_t i = 0; i < v.size(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
  return t;
}

std::vector<int64_t> Vec(const Tensor& t) { return testing::VectorOf<int64_t>(t); }

// A random graph with degrees 0..max_deg (some rows with repeated sources,
// as multigraphs have), as adjacency lists and as a Csr.
struct TestGraph {
  std::vector<std::vector<int64_t>> adj;
  Csr csr;
};

TestGraph RandomGraph(int64_t n, int64_t max_deg, uint64_t seed, DType idx) {
  std::mt19937_64 rng(seed);
  TestGraph g;
  g.adj.resize(n);
  std::vector<int64_t> indptr{0}, indices;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t d = static_cast<int64_t>(rng() % static_cast<uint64_t>(max_deg + 1));
    for (int64_t j = 0; j < d; ++j) g.adj[v].push_back(static_cast<int64_t>(rng() % n));
    indices.insert(indices.end(), g.adj[v].begin(), g.adj[v].end());
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  g.csr.indptr = I64(indptr);
  g.csr.indices = ToDType(indices, idx);
  g.csr.num_src = n;
  return g;
}

class SampleNeighborsTest : public ::testing::TestWithParam<DType> {};

// Checks one sample against the graph: each seed's draws are distinct edge
// positions of its row (as a multiset, a sub-multiset of the row), with
// count min(fanout, deg), and the whole row in CSR order when fanout < 0
// or fanout >= deg.
void CheckSample(const TestGraph& g, const std::vector<int64_t>& seeds, int64_t fanout,
                 const Tensor& indptr, const Tensor& nbrs) {
  ASSERT_EQ(indptr.dtype(), DType::kI64);
  ASSERT_EQ(nbrs.dtype(), DType::kI64);
  ASSERT_EQ(indptr.numel(), static_cast<int64_t>(seeds.size()) + 1);
  const std::vector<int64_t> ptr = Vec(indptr), nb = Vec(nbrs);
  ASSERT_EQ(ptr[0], 0);
  ASSERT_EQ(ptr.back(), static_cast<int64_t>(nb.size()));
  for (size_t i = 0; i < seeds.size(); ++i) {
    const std::vector<int64_t>& row = g.adj[seeds[i]];
    const int64_t d = static_cast<int64_t>(row.size());
    const int64_t want = (fanout < 0 || fanout >= d) ? d : fanout;
    ASSERT_EQ(ptr[i + 1] - ptr[i], want) << "seed position " << i;
    std::vector<int64_t> got(nb.begin() + ptr[i], nb.begin() + ptr[i + 1]);
    if (want == d) {
      EXPECT_EQ(got, row) << "seed position " << i;
      continue;
    }
    std::map<int64_t, int64_t> avail;
    for (int64_t v : row) ++avail[v];
    for (int64_t v : got) {
      ASSERT_GT(avail[v]--, 0) << "seed " << seeds[i] << " drew " << v
                               << " more often than it is an in-neighbour";
    }
  }
}

TEST_P(SampleNeighborsTest, SubsetDistinctAndCount) {
  const TestGraph g = RandomGraph(300, 40, 7, GetParam());
  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < 300; v += 2) seeds.push_back(v);
  seeds.push_back(4);  // a repeated seed is allowed and draws the same sample
  ExecContext ctx = CpuContext(1);
  for (int64_t fanout : {-1, 0, 1, 3, 10, 25, 40, 1000}) {
    Tensor ptr, nb;
    ASSERT_OK(SampleNeighbors(ctx, g.csr, ToDType(seeds, GetParam()), fanout, RngKey::FromSeed(3), &ptr, &nb));
    CheckSample(g, seeds, fanout, ptr, nb);
    const std::vector<int64_t> p = Vec(ptr), n = Vec(nb);
    const size_t last = seeds.size() - 1;
    EXPECT_TRUE(std::equal(n.begin() + p[2], n.begin() + p[3], n.begin() + p[last]))
        << "seed 4 at positions 2 and " << last << " differ";
  }
}

TEST_P(SampleNeighborsTest, DistinctPositionsWithLargeFanout) {
  // One row of 500 distinct sources, fanout 200: exercises the taken-set
  // with many collisions; the draws must be 200 distinct neighbours.
  std::vector<int64_t> row(500);
  for (int64_t j = 0; j < 500; ++j) row[j] = (j * 7919) % 500;
  Csr csr;
  csr.indptr = I64({0, 500});
  csr.indices = ToDType(row, GetParam());
  csr.num_src = 500;
  ExecContext ctx = CpuContext(1);
  for (uint64_t k = 0; k < 20; ++k) {
    Tensor ptr, nb;
    ASSERT_OK(SampleNeighbors(ctx, csr, I64({0}), 200, RngKey::FromSeed(k), &ptr, &nb));
    std::vector<int64_t> got = Vec(nb);
    ASSERT_EQ(got.size(), 200u);
    std::set<int64_t> uniq(got.begin(), got.end());
    EXPECT_EQ(uniq.size(), 200u);
    for (int64_t v : got) EXPECT_TRUE(v >= 0 && v < 500);
  }
}

TEST_P(SampleNeighborsTest, SameResultForAnyThreadCountAndSeedPosition) {
  const TestGraph g = RandomGraph(5000, 30, 11, GetParam());
  const std::vector<int64_t> seeds = RandomSeeds(3000, 5000, 5);
  ThreadPool one(1), two(2), three(3);
  const RngKey key = RngKey::FromSeed(42).Fold(7);
  Tensor p1, n1, p2, n2, p3, n3;
  ASSERT_OK(SampleNeighbors(CpuContext(0, &one), g.csr, I64(seeds), 5, key, &p1, &n1));
  ASSERT_OK(SampleNeighbors(CpuContext(0, &two), g.csr, I64(seeds), 5, key, &p2, &n2));
  ASSERT_OK(SampleNeighbors(CpuContext(0, &three), g.csr, I64(seeds), 5, key, &p3, &n3));
  EXPECT_EQ(Vec(p1), Vec(p2));
  EXPECT_EQ(Vec(n1), Vec(n2));
  EXPECT_EQ(Vec(p1), Vec(p3));
  EXPECT_EQ(Vec(n1), Vec(n3));
  CheckSample(g, seeds, 5, p1, n1);

  // A node's sample depends on (key, node) only, not on where it sits.
  std::vector<int64_t> reversed(seeds.rbegin(), seeds.rend());
  Tensor pr, nr;
  ASSERT_OK(SampleNeighbors(CpuContext(0, &two), g.csr, I64(reversed), 5, key, &pr, &nr));
  const std::vector<int64_t> a = Vec(p1), an = Vec(n1), b = Vec(pr), bn = Vec(nr);
  const size_t n = seeds.size();
  for (size_t i = 0; i < n; ++i) {
    const size_t r = n - 1 - i;
    ASSERT_TRUE(std::equal(an.begin() + a[i], an.begin() + a[i + 1], bn.begin() + b[r], bn.begin() + b[r + 1]))
        << "seed " << seeds[i];
  }

  // A different key gives a different sample.
  Tensor pk, nk;
  ASSERT_OK(SampleNeighbors(CpuContext(0, &one), g.csr, I64(seeds), 5, key.Fold(1), &pk, &nk));
  EXPECT_NE(Vec(n1), Vec(nk));
}

TEST_P(SampleNeighborsTest, UniformInclusion) {
  // Node 0 has in-neighbours 1..10; with fanout 3 each is included with
  // probability 3/10. Over 20000 keys the count per neighbour is binomial
  // (sd ~ 65): a 6-sd band, plus a chi-square bound over the 10 counts.
  std::vector<int64_t> indptr{0, 10};
  for (int v = 1; v < 11; ++v) indptr.push_back(10);  // nodes 1..10: no in-edges
  Csr csr;
  csr.indptr = I64(indptr);
  csr.indices = ToDType({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, GetParam());
  csr.num_src = 11;
  ExecContext ctx = CpuContext(1);
  const int kTrials = 20000;
  std::vector<int64_t> count(11, 0);
  // Runs of three consecutive neighbours catch a sampler that picks sets
  // non-uniformly while keeping the marginals (e.g. a random window).
  int64_t runs_seen = 0;
  for (int t = 0; t < kTrials; ++t) {
    Tensor ptr, nb;
    ASSERT_OK(SampleNeighbors(ctx, csr, I64({0}), 3, RngKey::FromSeed(1000 + t).Fold(2), &ptr, &nb));
    std::vector<int64_t> got = Vec(nb);
    ASSERT_EQ(got.size(), 3u);
    for (int64_t v : got) ++count[v];
    std::sort(got.begin(), got.end());
    if (got[1] == got[0] + 1 && got[2] == got[1] + 1) ++runs_seen;
  }
  const double expected = kTrials * 0.3;
  const double sd = std::sqrt(kTrials * 0.3 * 0.7);
  double chi2 = 0;
  for (int v = 1; v <= 10; ++v) {
    EXPECT_NEAR(static_cast<double>(count[v]), expected, 6 * sd) << "neighbour " << v;
    chi2 += (count[v] - expected) * (count[v] - expected) / expected;
  }
  // 9 degrees of freedom: P(chi2 > 40) < 1e-5.
  EXPECT_LT(chi2, 40.0);
  // P(three consecutive of 10 in a 3-subset) = 8 / C(10,3) = 1/15.
  const double runs = kTrials / 15.0;
  EXPECT_NEAR(static_cast<double>(runs_seen), runs, 6 * std::sqrt(runs));
}

TEST_P(SampleNeighborsTest, EmptySeeds) {
  const TestGraph g = RandomGraph(10, 3, 1, GetParam());
  Tensor ptr, nb;
  ASSERT_OK(SampleNeighbors(CpuContext(1), g.csr, I64({}), 2, RngKey::FromSeed(1), &ptr, &nb));
  EXPECT_EQ(Vec(ptr), std::vector<int64_t>{0});
  EXPECT_EQ(nb.numel(), 0);
}

TEST_P(SampleNeighborsTest, Errors) {
  const TestGraph g = RandomGraph(10, 3, 1, GetParam());
  ExecContext ctx = CpuContext(1);
  Tensor ptr, nb;
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, g.csr, I64({1, 2, 10}), 2, RngKey{}, &ptr, &nb),
                        "seeds[2] = 10", "out of range [0, 10)");
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, g.csr, I64({-3}), 2, RngKey{}, &ptr, &nb), "seeds[0] = -3");
  Tensor f32 = Tensor::Zeros({2}, DType::kF32);
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, g.csr, f32, 2, RngKey{}, &ptr, &nb), "seeds",
                        "expected dtype i32 or i64, got f32");
  Csr bad = g.csr;
  bad.indices = Tensor::Zeros({g.csr.num_edges()}, DType::kF32);
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, bad, I64({0}), 2, RngKey{}, &ptr, &nb), "graph.indices",
                        "i32 or i64");
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, g.csr, I64({0}), 2, RngKey{}, nullptr, &nb), "null");
}

// ---- source mask ----

Tensor U8(const std::vector<uint8_t>& v) { return testing::TensorOf(v); }

std::vector<uint8_t> RandomMask(int64_t n, double p_one, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> m(static_cast<size_t>(n));
  // Nonzero bytes other than 1 count as allowed too.
  for (auto& b : m) b = (rng() % 1000) < p_one * 1000 ? static_cast<uint8_t>(1 + rng() % 2) : 0;
  return m;
}

// g with every row filtered to its allowed sources (CSR order kept).
TestGraph Filtered(const TestGraph& g, const std::vector<uint8_t>& mask) {
  TestGraph f;
  f.adj.resize(g.adj.size());
  for (size_t v = 0; v < g.adj.size(); ++v) {
    for (int64_t u : g.adj[v]) {
      if (mask[u] != 0) f.adj[v].push_back(u);
    }
  }
  return f;
}

// The masked op written the slow way: Floyd over the allowed list with a
// std::set, keyed as ops.h says.
void NaiveMaskedSample(const TestGraph& g, const std::vector<uint8_t>& mask, const std::vector<int64_t>& seeds,
                       int64_t fanout, RngKey key, std::vector<int64_t>* ptr, std::vector<int64_t>* nbrs) {
  ptr->assign(1, 0);
  nbrs->clear();
  for (int64_t s : seeds) {
    std::vector<int64_t> allowed;
    for (int64_t u : g.adj[s]) {
      if (mask[u] != 0) allowed.push_back(u);
    }
    const int64_t c = static_cast<int64_t>(allowed.size());
    const int64_t k = (fanout < 0 || fanout >= c) ? c : fanout;
    if (k == c) {
      nbrs->insert(nbrs->end(), allowed.begin(), allowed.end());
    } else {
      std::set<int64_t> taken;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t m = c - k + j;
        int64_t t = static_cast<int64_t>(key.PairedBelow(static_cast<uint64_t>(m + 1), static_cast<uint64_t>(s), j));
        if (!taken.insert(t).second) {
          t = m;
          taken.insert(t);
        }
        nbrs->push_back(allowed[t]);
      }
    }
    ptr->push_back(static_cast<int64_t>(nbrs->size()));
  }
}

TEST_P(SampleNeighborsTest, MaskedMatchesNaiveAndDrawsOnlyAllowed) {
  const TestGraph g = RandomGraph(400, 40, 21, GetParam());
  const std::vector<uint8_t> mask = RandomMask(400, 0.4, 3);
  const Tensor mask_t = U8(mask);
  const TestGraph allowed = Filtered(g, mask);
  std::vector<int64_t> seeds;
  // Every node, allowed or not: the mask restricts sources, not seeds.
  for (int64_t v = 0; v < 400; ++v) seeds.push_back((v * 37) % 400);
  ExecContext ctx = CpuContext(1);
  const RngKey key = RngKey::FromSeed(9).Fold(4);
  for (int64_t fanout : {-1, 0, 1, 3, 10, 25, 1000}) {
    Tensor ptr, nb;
    ASSERT_OK(SampleNeighbors(ctx, g.csr, ToDType(seeds, GetParam()), fanout, key, &ptr, &nb, &mask_t));
    CheckSample(allowed, seeds, fanout, ptr, nb);
    for (int64_t u : Vec(nb)) ASSERT_NE(mask[u], 0) << "drew masked-out source " << u << " at fanout " << fanout;
    std::vector<int64_t> want_ptr, want_nb;
    NaiveMaskedSample(g, mask, seeds, fanout, key, &want_ptr, &want_nb);
    EXPECT_EQ(Vec(ptr), want_ptr) << "fanout " << fanout;
    EXPECT_EQ(Vec(nb), want_nb) << "fanout " << fanout;
  }
}

TEST_P(SampleNeighborsTest, UnmaskedMatchesNaiveFloyd) {
  // Rows up to 300 long and fanouts around the vector Philox's groups of
  // eight, the small-fanout path (up to 16 draws) and blocks of 64 draws,
  // against scalar RngKey::PairedBelow draws.
  const TestGraph g = RandomGraph(300, 300, 33, GetParam());
  const std::vector<uint8_t> all(300, 1);
  std::vector<int64_t> seeds;
  for (int64_t v = 0; v < 300; ++v) seeds.push_back((v * 7 + 3) % 300);
  const RngKey key = RngKey::FromSeed(5).Fold(11);
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    ExecContext ctx = CpuContext(1, &pool);
    for (int64_t fanout : {1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 130, 299}) {
      Tensor ptr, nb;
      ASSERT_OK(SampleNeighbors(ctx, g.csr, ToDType(seeds, GetParam()), fanout, key, &ptr, &nb));
      std::vector<int64_t> want_ptr, want_nb;
      NaiveMaskedSample(g, all, seeds, fanout, key, &want_ptr, &want_nb);
      EXPECT_EQ(Vec(ptr), want_ptr) << "fanout " << fanout << ", " << threads << " threads";
      EXPECT_EQ(Vec(nb), want_nb) << "fanout " << fanout << ", " << threads << " threads";
    }
  }
}

TEST_P(SampleNeighborsTest, AllOnesMaskGivesTheUnmaskedBits) {
  const TestGraph g = RandomGraph(5000, 60, 13, GetParam());
  const std::vector<int64_t> seeds = RandomSeeds(3000, 5000, 8);
  const Tensor ones = U8(std::vector<uint8_t>(5000, 1));
  ThreadPool two(2);
  const ExecContext ctx = CpuContext(0, &two);
  for (int64_t fanout : {-1, 1, 5, 25, 100}) {
    const RngKey key = RngKey::FromSeed(77).Fold(static_cast<uint64_t>(fanout + 1));
    Tensor p0, n0, p1, n1;
    ASSERT_OK(SampleNeighbors(ctx, g.csr, I64(seeds), fanout, key, &p0, &n0));
    ASSERT_OK(SampleNeighbors(ctx, g.csr, I64(seeds), fanout, key, &p1, &n1, &ones));
    EXPECT_EQ(Vec(p0), Vec(p1)) << "fanout " << fanout;
    EXPECT_EQ(Vec(n0), Vec(n1)) << "fanout " << fanout;
  }
}

TEST_P(SampleNeighborsTest, MaskedSameForAnyThreadCount) {
  const TestGraph g = RandomGraph(5000, 50, 17, GetParam());
  const Tensor mask = U8(RandomMask(5000, 0.25, 6));
  const std::vector<int64_t> seeds = RandomSeeds(4000, 5000, 2);
  ThreadPool one(1), three(3);
  const RngKey key = RngKey::FromSeed(5).Fold(1);
  for (int64_t fanout : {-1, 4, 15}) {
    Tensor p1, n1, p3, n3;
    ASSERT_OK(SampleNeighbors(CpuContext(0, &one), g.csr, I64(seeds), fanout, key, &p1, &n1, &mask));
    ASSERT_OK(SampleNeighbors(CpuContext(0, &three), g.csr, I64(seeds), fanout, key, &p3, &n3, &mask));
    EXPECT_EQ(Vec(p1), Vec(p3)) << "fanout " << fanout;
    EXPECT_EQ(Vec(n1), Vec(n3)) << "fanout " << fanout;
  }
}

TEST_P(SampleNeighborsTest, MaskedUniformOverAllowedNeighbours) {
  // Node 0 has in-neighbours 1..20 of which the 10 odd ones are allowed;
  // fanout 3 includes each allowed one with probability 3/10 (sd ~ 65 over
  // 20000 keys): a 6-sd band per neighbour and a chi-square bound.
  std::vector<int64_t> indptr{0, 20}, row;
  for (int v = 1; v <= 20; ++v) {
    indptr.push_back(20);
    row.push_back(v);
  }
  Csr csr;
  csr.indptr = I64(indptr);
  csr.indices = ToDType(row, GetParam());
  csr.num_src = 21;
  std::vector<uint8_t> m(21, 0);
  for (int v = 1; v <= 20; v += 2) m[v] = 1;
  const Tensor mask = U8(m);
  ExecContext ctx = CpuContext(1);
  const int kTrials = 20000;
  std::vector<int64_t> count(21, 0);
  for (int t = 0; t < kTrials; ++t) {
    Tensor ptr, nb;
    ASSERT_OK(SampleNeighbors(ctx, csr, I64({0}), 3, RngKey::FromSeed(500 + t), &ptr, &nb, &mask));
    const std::vector<int64_t> got = Vec(nb);
    ASSERT_EQ(got.size(), 3u);
    ASSERT_EQ(std::set<int64_t>(got.begin(), got.end()).size(), 3u);
    for (int64_t v : got) ++count[v];
  }
  const double expected = kTrials * 0.3;
  const double sd = std::sqrt(kTrials * 0.3 * 0.7);
  double chi2 = 0;
  for (int v = 1; v <= 20; ++v) {
    if (m[v] == 0) {
      EXPECT_EQ(count[v], 0) << "masked-out neighbour " << v;
      continue;
    }
    EXPECT_NEAR(static_cast<double>(count[v]), expected, 6 * sd) << "neighbour " << v;
    chi2 += (count[v] - expected) * (count[v] - expected) / expected;
  }
  EXPECT_LT(chi2, 40.0);  // 9 degrees of freedom: P(chi2 > 40) < 1e-5
}

TEST_P(SampleNeighborsTest, MaskErrors) {
  const TestGraph g = RandomGraph(10, 3, 1, GetParam());
  ExecContext ctx = CpuContext(1);
  Tensor ptr, nb;
  const Tensor short_mask = U8(std::vector<uint8_t>(5, 1));
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, g.csr, I64({0}), 2, RngKey{}, &ptr, &nb, &short_mask),
                        "SampleNeighbors: source_mask has 5 entries, expected one per graph source node (10)");
  const Tensor i32_mask = Tensor::Zeros({10}, DType::kI32);
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, g.csr, I64({0}), 2, RngKey{}, &ptr, &nb, &i32_mask),
                        "SampleNeighbors: source_mask: expected dtype u8, got i32");
  const Tensor undefined;
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, g.csr, I64({0}), 2, RngKey{}, &ptr, &nb, &undefined),
                        "SampleNeighbors: source_mask");
  // The mask is indexed by the row's sources: a bad index is an error
  // naming its position and row, not a read out of bounds.
  Csr bad;
  bad.indptr = I64({0, 1, 3});
  bad.indices = ToDType({1, 0, 7}, GetParam());
  bad.num_src = 2;
  const Tensor mask2 = U8({1, 1});
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, bad, I64({0, 1}), 1, RngKey{}, &ptr, &nb, &mask2),
                        "graph.indices[2] = 7 (row 1) is out of range [0, 2)");
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, g.csr, I64({11}), 2, RngKey{}, &ptr, &nb, &g.csr.indptr),
                        "source_mask");
}

// The sink sees consecutive ranges in order, each entry once, never two
// calls at once, always on the calling thread, and only final entries:
// what it records (and rewrites) must equal the op's output, with any
// thread count, masked or not.
TEST_P(SampleNeighborsTest, SinkSeesEveryEntryInOrderOnce) {
  const TestGraph g = RandomGraph(5000, 30, 19, GetParam());
  const std::vector<int64_t> seeds = RandomSeeds(3000, 5000, 8);
  const Tensor all_ones = U8(std::vector<uint8_t>(5000, 1));
  const RngKey key = RngKey::FromSeed(4).Fold(2);
  for (int threads : {1, 2, 3}) {
    for (const Tensor* mask : {static_cast<const Tensor*>(nullptr), &all_ones}) {
      ThreadPool pool(threads);
      std::atomic<int> inside{0};
      std::atomic<bool> overlapped{false};
      int64_t next = 0, calls = 0, elsewhere = 0;
      std::vector<int64_t> seen;
      const std::thread::id caller = std::this_thread::get_id();
      const SampleSink sink = [&](const int64_t* sampled, int64_t* nb, int64_t begin, int64_t end) {
        if (inside.fetch_add(1) != 0) overlapped = true;
        elsewhere += std::this_thread::get_id() != caller;
        EXPECT_EQ(begin, next) << "ranges must be consecutive";
        EXPECT_LT(begin, end);
        next = end;
        ++calls;
        for (int64_t e = begin; e < end; ++e) {
          const int64_t v = sampled[e - begin];
          seen.push_back(v);
          nb[e] = -v - 1;  // the sink writes its range
        }
        inside.fetch_sub(1);
        return Status::OK();
      };
      Tensor ptr, nb, want_ptr, want_nb;
      ASSERT_OK(SampleNeighbors(CpuContext(0, &pool), g.csr, I64(seeds), 5, key, &ptr, &nb, mask, &sink));
      ASSERT_OK(SampleNeighbors(CpuContext(0, &pool), g.csr, I64(seeds), 5, key, &want_ptr, &want_nb, mask));
      EXPECT_FALSE(overlapped) << threads << " threads";
      EXPECT_EQ(elsewhere, 0) << "calls off the calling thread, " << threads << " threads";
      EXPECT_GT(calls, 1) << "one call per chunk of seeds";
      EXPECT_EQ(Vec(ptr), Vec(want_ptr));
      EXPECT_EQ(seen, Vec(want_nb)) << threads << " threads";
      std::vector<int64_t> rewritten = Vec(want_nb);
      for (int64_t& v : rewritten) v = -v - 1;
      EXPECT_EQ(Vec(nb), rewritten);
    }
  }
}

// The op draws into a buffer sized by a bound and returns a view of its
// start: seeds x fanout where the fanout is small against the graph's
// degrees, else the exact count from a pass over the degrees, so that a
// sparse graph's batch does not hold many times the memory it uses.
TEST_P(SampleNeighborsTest, OutputBufferIsBoundedByTheDraws) {
  ThreadPool pool(2);
  ExecContext ctx = CpuContext(0, &pool);
  std::vector<int64_t> seeds(1000);
  for (int64_t i = 0; i < 1000; ++i) seeds[static_cast<size_t>(i)] = (i * 13) % 3000;
  auto held = [](const Tensor& t) { return static_cast<int64_t>(t.storage()->bytes() / sizeof(int64_t)); };
  // Mean degree about 20: fanout 10 takes seeds x 10 slots.
  const TestGraph dense = RandomGraph(3000, 40, 3, GetParam());
  Tensor ptr, nb;
  ASSERT_OK(SampleNeighbors(ctx, dense.csr, I64(seeds), 10, RngKey::FromSeed(1), &ptr, &nb));
  EXPECT_LE(held(nb), 1000 * 10);
  EXPECT_GE(held(nb), nb.numel());
  // Mean degree about 2: fanout 10 would hold 5x what it draws; the slots
  // are counted instead.
  const TestGraph sparse = RandomGraph(3000, 4, 3, GetParam());
  ASSERT_OK(SampleNeighbors(ctx, sparse.csr, I64(seeds), 10, RngKey::FromSeed(1), &ptr, &nb));
  EXPECT_EQ(held(nb), nb.numel());
  CheckSample(sparse, seeds, 10, ptr, nb);
}

// A hop drawn partly ahead (the next hop's draws for this call's seeds,
// made during this call) equals the hop drawn in one call, with or
// without a sink and a mask, at any thread count, for seed counts on and
// off the chunk size.
TEST_P(SampleNeighborsTest, DrawsMadeAheadEqualDrawsMadeInPlace) {
  const TestGraph g = RandomGraph(3000, 40, 29, GetParam());
  const Tensor mask = U8(RandomMask(3000, 0.7, 5));
  const RngKey key0 = RngKey::FromSeed(6).Fold(0), key1 = RngKey::FromSeed(6).Fold(1);
  for (int64_t first : {int64_t{1}, int64_t{128}, int64_t{300}}) {
    std::vector<int64_t> frontier;  // the first hop's seeds, then more nodes
    for (int64_t i = 0; i < first + 500; ++i) frontier.push_back((i * 17 + 3) % 3000);
    const Tensor seeds = ToDType(std::vector<int64_t>(frontier.begin(), frontier.begin() + first), DType::kI32);
    for (int threads : {1, 2, 3}) {
      for (const Tensor* m : {static_cast<const Tensor*>(nullptr), &mask}) {
        ThreadPool pool(threads);
        ExecContext ctx = CpuContext(0, &pool);
        Tensor want_ptr, want_nb, ptr0, nb0, ptr, nb;
        ASSERT_OK(SampleNeighbors(ctx, g.csr, I64(frontier), 10, key1, &want_ptr, &want_nb, m));
        SampledAhead ahead;
        ahead.fanout = 10;
        ahead.key = key1;
        ASSERT_OK(SampleNeighbors(ctx, g.csr, seeds, 15, key0, &ptr0, &nb0, m, nullptr, nullptr, &ahead));
        EXPECT_EQ(ahead.num_seeds, first);
        std::vector<int64_t> seen;
        const SampleSink sink = [&](const int64_t* sampled, int64_t* out, int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) {
            seen.push_back(sampled[i - b]);
            out[i] = sampled[i - b];
          }
          return Status::OK();
        };
        ASSERT_OK(SampleNeighbors(ctx, g.csr, I64(frontier), 10, key1, &ptr, &nb, m, &sink, &ahead));
        EXPECT_EQ(Vec(ptr), Vec(want_ptr)) << first << " drawn ahead, " << threads << " threads";
        EXPECT_EQ(Vec(nb), Vec(want_nb)) << first << " drawn ahead, " << threads << " threads";
        EXPECT_EQ(seen, Vec(want_nb));
        ASSERT_OK(SampleNeighbors(ctx, g.csr, I64(frontier), 10, key1, &ptr, &nb, m, nullptr, &ahead));
        EXPECT_EQ(Vec(nb), Vec(want_nb)) << "without a sink";
      }
    }
  }
}

TEST_P(SampleNeighborsTest, DrawsMadeAheadMustBeThisHops) {
  const TestGraph g = RandomGraph(300, 10, 31, GetParam());
  ExecContext ctx = CpuContext(1);
  SampledAhead ahead;
  ahead.fanout = 4;
  ahead.key = RngKey::FromSeed(1);
  Tensor ptr, nb;
  ASSERT_OK(SampleNeighbors(ctx, g.csr, I64({1, 2, 3}), 5, RngKey::FromSeed(2), &ptr, &nb, nullptr, nullptr,
                            nullptr, &ahead));
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, g.csr, I64({1, 2, 3, 4}), 6, RngKey::FromSeed(1), &ptr, &nb, nullptr,
                                        nullptr, &ahead),
                        "drawn holds 3 seeds' draws for fanout 4", "for fanout 6");
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, g.csr, I64({1, 2}), 4, RngKey::FromSeed(1), &ptr, &nb, nullptr,
                                        nullptr, &ahead),
                        "expected at most 2 seeds'");
  EXPECT_ERROR_CONTAINS(SampleNeighbors(ctx, g.csr, I64({1, 2, 3}), 4, RngKey::FromSeed(9), &ptr, &nb, nullptr,
                                        nullptr, &ahead),
                        "another key");
}

TEST_P(SampleNeighborsTest, SinkErrorStopsTheCallsAndIsReturned) {
  const TestGraph g = RandomGraph(5000, 30, 23, GetParam());
  std::vector<int64_t> seeds(3000);
  for (int64_t i = 0; i < 3000; ++i) seeds[static_cast<size_t>(i)] = i;
  ThreadPool pool(2);
  int calls = 0;
  const SampleSink sink = [&](const int64_t*, int64_t*, int64_t, int64_t) {
    return ++calls == 2 ? DataLoss("sink refused its second range") : Status::OK();
  };
  Tensor ptr, nb;
  EXPECT_ERROR_CONTAINS(SampleNeighbors(CpuContext(0, &pool), g.csr, I64(seeds), 5, RngKey::FromSeed(1), &ptr,
                                        &nb, nullptr, &sink),
                        "sink refused its second range");
  EXPECT_EQ(calls, 2);
}

INSTANTIATE_TEST_SUITE_P(IndexTypes, SampleNeighborsTest, ::testing::Values(DType::kI32, DType::kI64),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(DTypeName(info.param));
                         });

}  // namespace
}  // namespace foresight::kernels
