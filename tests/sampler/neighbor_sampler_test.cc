// NeighborSampler: block structure invariants, sampled neighbours against
// the graph, the hop keys, determinism by (seed, epoch, batch) and thread
// count, errors (and recovery after them), seeds without neighbours, and
// FullNeighborBlock; resident sampling with a source mask (only resident
// nodes, fanouts over the resident in-neighbours, an all-ones mask changing
// nothing, thread count, a seed that is not resident).
#include "foresight/sampler/neighbor_sampler.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/thread_pool.h"
#include "foresight/kernels/ops.h"
#include "foresight/sampler/partition_order.h"
#include "foresight/sampler/resident_mask.h"
#include "testing/testing.h"

namespace foresight::sampler {
namespace {

Tensor I64(const std::vector<int64_t>& v) { return testing::TensorOf(v); }

Tensor I32(const std::vector<int64_t>& v) {
  Tensor t = Tensor::Empty({static_cast<int64_t>(v.size())}, DType::kI32);
  for (size_t i = 0; i < v.size(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
  return t;
}

std::vector<int64_t> Vec(const Tensor& t) { return testing::VectorOf<int64_t>(t); }

// A square graph whose rows hold distinct in-neighbours (degrees 0..max_deg).
struct TestGraph {
  std::vector<std::vector<int64_t>> adj;
  kernels::Csr csr;
};

TestGraph RandomGraph(int64_t n, int64_t max_deg, uint64_t seed, DType idx = DType::kI64) {
  std::mt19937_64 rng(seed);
  TestGraph g;
  g.adj.resize(n);
  std::vector<int64_t> indptr{0}, indices;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t d = static_cast<int64_t>(rng() % static_cast<uint64_t>(max_deg + 1));
    std::set<int64_t> seen;
    while (static_cast<int64_t>(seen.size()) < d) {
      const int64_t u = static_cast<int64_t>(rng() % n);
      if (seen.insert(u).second) g.adj[v].push_back(u);
    }
    indices.insert(indices.end(), g.adj[v].begin(), g.adj[v].end());
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  g.csr.indptr = I64(indptr);
  g.csr.indices = idx == DType::kI64 ? I64(indices) : I32(indices);
  g.csr.num_src = n;
  return g;
}

std::vector<int64_t> DistinctSeeds(int64_t n, int64_t count, uint64_t seed) {
  std::vector<int64_t> all(n);
  for (int64_t i = 0; i < n; ++i) all[i] = i;
  std::shuffle(all.begin(), all.end(), std::mt19937_64(seed));
  all.resize(count);
  return all;
}

// Every structural promise of SampledBatch, and each block's rows against
// the graph with the fanout of its hop.
void CheckBatch(const TestGraph& g, const std::vector<int64_t>& seeds, const std::vector<int64_t>& fanouts,
                const SampledBatch& b) {
  const int num_layers = static_cast<int>(fanouts.size());
  ASSERT_EQ(static_cast<int>(b.blocks.size()), num_layers);
  EXPECT_EQ(Vec(b.seeds), seeds);
  const std::vector<int64_t> input = Vec(b.input_nodes);
  ASSERT_GE(input.size(), seeds.size());
  EXPECT_TRUE(std::equal(seeds.begin(), seeds.end(), input.begin())) << "input_nodes must start with the seeds";
  EXPECT_EQ(std::set<int64_t>(input.begin(), input.end()).size(), input.size()) << "input_nodes not unique";
  ASSERT_EQ(b.blocks[0].num_src, static_cast<int64_t>(input.size()));
  EXPECT_EQ(b.blocks.back().num_dst(), static_cast<int64_t>(seeds.size()));
  int64_t edges = 0;
  for (int l = 0; l < num_layers; ++l) {
    const kernels::Csr& blk = b.blocks[l];
    ASSERT_EQ(blk.indptr.dtype(), DType::kI64);
    ASSERT_EQ(blk.indices.dtype(), DType::kI64);
    if (l + 1 < num_layers) {
      EXPECT_EQ(blk.num_dst(), b.blocks[l + 1].num_src) << "blocks " << l << ", " << l + 1;
    }
    EXPECT_LE(blk.num_dst(), blk.num_src);
    edges += blk.num_edges();
    const int64_t fanout = fanouts[num_layers - 1 - l];
    const std::vector<int64_t> ptr = Vec(blk.indptr), idx = Vec(blk.indices);
    ASSERT_EQ(ptr.back(), static_cast<int64_t>(idx.size()));
    // New sources get local ids num_dst, num_dst+1, ... in first-appearance
    // order, and every one of them is used.
    int64_t next_new = blk.num_dst();
    for (int64_t s : idx) {
      ASSERT_GE(s, 0);
      ASSERT_LT(s, blk.num_src) << "block " << l;
      if (s >= blk.num_dst()) {
        ASSERT_LE(s, next_new) << "block " << l << ": source " << s << " before " << next_new;
        if (s == next_new) ++next_new;
      }
    }
    EXPECT_EQ(next_new, blk.num_src) << "block " << l << " lists sources no edge uses";
    // Local id i is input_nodes[i] in every block (ids only ever grow).
    for (int64_t r = 0; r < blk.num_dst(); ++r) {
      const std::vector<int64_t>& row = g.adj[input[r]];
      const int64_t d = static_cast<int64_t>(row.size());
      const int64_t want = (fanout < 0 || fanout >= d) ? d : fanout;
      ASSERT_EQ(ptr[r + 1] - ptr[r], want) << "block " << l << " row " << r;
      std::vector<int64_t> got;
      for (int64_t e = ptr[r]; e < ptr[r + 1]; ++e) got.push_back(input[idx[e]]);
      if (want == d) {
        EXPECT_EQ(got, row) << "block " << l << " row " << r << ": all neighbours in CSR order";
      } else {
        const std::set<int64_t> row_set(row.begin(), row.end()), got_set(got.begin(), got.end());
        EXPECT_EQ(got_set.size(), got.size()) << "block " << l << " row " << r << ": repeated neighbour";
        for (int64_t v : got) EXPECT_TRUE(row_set.count(v)) << v << " is not an in-neighbour of " << input[r];
      }
    }
  }
  EXPECT_EQ(b.sampled_edges, edges);
}

void ExpectSameBatch(const SampledBatch& a, const SampledBatch& b) {
  EXPECT_EQ(Vec(a.seeds), Vec(b.seeds));
  EXPECT_EQ(Vec(a.input_nodes), Vec(b.input_nodes));
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (size_t l = 0; l < a.blocks.size(); ++l) {
    EXPECT_EQ(Vec(a.blocks[l].indptr), Vec(b.blocks[l].indptr)) << "block " << l;
    EXPECT_EQ(Vec(a.blocks[l].indices), Vec(b.blocks[l].indices)) << "block " << l;
    EXPECT_EQ(a.blocks[l].num_src, b.blocks[l].num_src) << "block " << l;
  }
  EXPECT_EQ(a.sampled_edges, b.sampled_edges);
}

TEST(NeighborSampler, BlockInvariantsAndNeighbours) {
  for (DType idx : {DType::kI32, DType::kI64}) {
    const TestGraph g = RandomGraph(400, 12, 3, idx);
    for (const std::vector<int64_t>& fanouts :
         {std::vector<int64_t>{5}, std::vector<int64_t>{4, 3}, std::vector<int64_t>{3, 2, -1},
          std::vector<int64_t>{-1, 0}, std::vector<int64_t>{20, 20}}) {
      NeighborSampler sampler(g.csr, fanouts, 17);
      const std::vector<int64_t> seeds = DistinctSeeds(400, 37, 5);
      SampledBatch b;
      ASSERT_OK(sampler.Sample(CpuContext(0), I64(seeds), 2, 9, &b));
      SCOPED_TRACE("fanouts[0] = " + std::to_string(fanouts[0]) + ", layers " + std::to_string(fanouts.size()));
      CheckBatch(g, seeds, fanouts, b);
    }
  }
}

TEST(NeighborSampler, SeedsAsI32AndEmptyBatch) {
  const TestGraph g = RandomGraph(100, 6, 4);
  NeighborSampler sampler(g.csr, {3, 2}, 1);
  const std::vector<int64_t> seeds = DistinctSeeds(100, 10, 2);
  SampledBatch a, b;
  ASSERT_OK(sampler.Sample(CpuContext(0), I32(seeds), 0, 0, &a));
  ASSERT_OK(sampler.Sample(CpuContext(0), I64(seeds), 0, 0, &b));
  CheckBatch(g, seeds, {3, 2}, a);
  ExpectSameBatch(a, b);

  SampledBatch empty;
  ASSERT_OK(sampler.Sample(CpuContext(0), I64({}), 0, 1, &empty));
  CheckBatch(g, {}, {3, 2}, empty);
  EXPECT_EQ(empty.sampled_edges, 0);
}

TEST(NeighborSampler, HopKeysAreSeedEpochBatchHop) {
  // Hop h must draw exactly what SampleNeighbors draws with
  // FromSeed(seed).Fold(kSampling).Fold(epoch).Fold(batch).Fold(h).
  const TestGraph g = RandomGraph(300, 15, 8);
  const std::vector<int64_t> seeds = DistinctSeeds(300, 20, 1);
  NeighborSampler sampler(g.csr, {4, 3}, 99);
  SampledBatch b;
  ASSERT_OK(sampler.Sample(CpuContext(0), I64(seeds), 5, 6, &b));
  const RngKey want = RngKey::FromSeed(99)
                          .Fold(static_cast<uint64_t>(RngPurpose::kSampling))
                          .Fold(5)
                          .Fold(6);
  EXPECT_EQ(NeighborSampler::HopKey(99, 5, 6, 1).key, want.Fold(1).key);
  const std::vector<int64_t> input = Vec(b.input_nodes);
  for (int h = 0; h < 2; ++h) {
    const kernels::Csr& blk = b.blocks[1 - h];
    std::vector<int64_t> dst(input.begin(), input.begin() + blk.num_dst());
    Tensor ptr, nb;
    ASSERT_OK(kernels::SampleNeighbors(CpuContext(0), g.csr, I64(dst), h == 0 ? 4 : 3, want.Fold(h), &ptr, &nb));
    EXPECT_EQ(Vec(ptr), Vec(blk.indptr)) << "hop " << h;
    std::vector<int64_t> global;
    for (int64_t s : Vec(blk.indices)) global.push_back(input[s]);
    EXPECT_EQ(Vec(nb), global) << "hop " << h;
  }
}

TEST(NeighborSampler, DeterministicBySeedEpochBatchAndThreadCount) {
  const TestGraph g = RandomGraph(3000, 20, 6);
  const std::vector<int64_t> seeds = DistinctSeeds(3000, 300, 3);
  ThreadPool one(1), two(2);
  NeighborSampler s1(g.csr, {6, 4}, 123), s2(g.csr, {6, 4}, 123);
  SampledBatch a, b, c;
  ASSERT_OK(s1.Sample(CpuContext(0, &one), I64(seeds), 3, 7, &a));
  ASSERT_OK(s2.Sample(CpuContext(0, &two), I64(seeds), 3, 7, &b));
  ExpectSameBatch(a, b);
  // The same sampler again, after an unrelated batch in between.
  SampledBatch other;
  ASSERT_OK(s1.Sample(CpuContext(0, &two), I64(seeds), 0, 0, &other));
  ASSERT_OK(s1.Sample(CpuContext(0, &two), I64(seeds), 3, 7, &c));
  ExpectSameBatch(a, c);
  CheckBatch(g, seeds, {6, 4}, a);

  // Another epoch, batch or seed gives another sample.
  SampledBatch e, bb, sd;
  ASSERT_OK(s1.Sample(CpuContext(0), I64(seeds), 4, 7, &e));
  ASSERT_OK(s1.Sample(CpuContext(0), I64(seeds), 3, 8, &bb));
  NeighborSampler s3(g.csr, {6, 4}, 124);
  ASSERT_OK(s3.Sample(CpuContext(0), I64(seeds), 3, 7, &sd));
  EXPECT_NE(Vec(a.blocks[1].indices), Vec(e.blocks[1].indices));
  EXPECT_NE(Vec(a.blocks[1].indices), Vec(bb.blocks[1].indices));
  EXPECT_NE(Vec(a.blocks[1].indices), Vec(sd.blocks[1].indices));
}

TEST(NeighborSampler, ErrorsAndRecovery) {
  const TestGraph g = RandomGraph(50, 5, 2);
  NeighborSampler sampler(g.csr, {3, 2}, 4);
  ExecContext ctx = CpuContext(0);
  SampledBatch b;
  EXPECT_ERROR_CONTAINS(sampler.Sample(ctx, I64({1, 2, 50}), 0, 0, &b), "seeds[2] = 50", "out of range [0, 50)");
  EXPECT_ERROR_CONTAINS(sampler.Sample(ctx, I64({7, 3, 7}), 0, 0, &b), "seeds[2] = 7", "repeats seeds[0]");
  EXPECT_ERROR_CONTAINS(sampler.Sample(ctx, Tensor::Zeros({2}, DType::kF32), 0, 0, &b), "seeds",
                        "i32 or i64");
  EXPECT_ERROR_CONTAINS(sampler.Sample(ctx, I64({1}), 0, 0, nullptr), "out is null");

  // After the errors the scratch map is clean: same result as a fresh one.
  SampledBatch after, fresh;
  ASSERT_OK(sampler.Sample(ctx, I64({7, 3, 9}), 1, 1, &after));
  NeighborSampler clean(g.csr, {3, 2}, 4);
  ASSERT_OK(clean.Sample(ctx, I64({7, 3, 9}), 1, 1, &fresh));
  ExpectSameBatch(after, fresh);

  NeighborSampler bad_fanout(g.csr, {3, -2}, 4);
  EXPECT_ERROR_CONTAINS(bad_fanout.Sample(ctx, I64({1}), 0, 0, &b), "fanouts[1] = -2");
  NeighborSampler no_fanout(g.csr, {}, 4);
  EXPECT_ERROR_CONTAINS(no_fanout.Sample(ctx, I64({1}), 0, 0, &b), "fanouts is empty");
  kernels::Csr rect = g.csr;
  rect.num_src = 60;
  NeighborSampler not_square(rect, {3}, 4);
  EXPECT_ERROR_CONTAINS(not_square.Sample(ctx, I64({1}), 0, 0, &b), "square", "50 rows", "num_src 60");
  kernels::Csr corrupt = g.csr;
  corrupt.indices = g.csr.indices.Clone();
  corrupt.indices.data<int64_t>()[0] = 1000;
  NeighborSampler corrupt_sampler(corrupt, {-1}, 4);
  std::vector<int64_t> all(50);
  for (int64_t i = 0; i < 50; ++i) all[i] = i;
  EXPECT_ERROR_CONTAINS(corrupt_sampler.Sample(ctx, I64(all), 0, 0, &b), "graph.indices holds node 1000");
}

// The seeds enter the id map at the first relabelling of the first hop,
// or after it when no seed has a neighbour: they are still the batch's
// first nodes, and a repeated seed is still an error.
TEST(NeighborSampler, SeedsWithoutNeighbours) {
  TestGraph g = RandomGraph(40, 6, 5);
  std::vector<int64_t> no_edges(41, 0);
  g.csr.indptr = I64(no_edges);
  g.csr.indices = I64({});
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    ExecContext ctx = CpuContext(0, &pool);
    NeighborSampler sampler(g.csr, {3, 2}, 4);
    SampledBatch b;
    ASSERT_OK(sampler.Sample(ctx, I32({9, 4, 31}), 0, 0, &b));
    EXPECT_EQ(Vec(b.input_nodes), (std::vector<int64_t>{9, 4, 31}));
    EXPECT_EQ(Vec(b.seeds), (std::vector<int64_t>{9, 4, 31}));
    ASSERT_EQ(b.blocks.size(), 2u);
    for (const kernels::Csr& block : b.blocks) {
      EXPECT_EQ(block.num_edges(), 0);
      EXPECT_EQ(block.num_dst(), 3);
      EXPECT_EQ(block.num_src, 3);
    }
    EXPECT_ERROR_CONTAINS(sampler.Sample(ctx, I64({5, 6, 5}), 0, 0, &b), "seeds[2] = 5", "repeats seeds[0]");
  }
}

TEST(NeighborSampler, FullNeighborBlockEqualsGraphRows) {
  for (DType idx : {DType::kI32, DType::kI64}) {
    const TestGraph g = RandomGraph(200, 9, 12, idx);
    NeighborSampler sampler(g.csr, {2}, 0);
    ExecContext ctx = CpuContext(0);

    // A subset of destinations: rows are the graph's rows, in CSR order.
    const std::vector<int64_t> dst = DistinctSeeds(200, 30, 4);
    kernels::Csr block;
    Tensor src;
    ASSERT_OK(sampler.FullNeighborBlock(ctx, I64(dst), &block, &src));
    const std::vector<int64_t> nodes = Vec(src), ptr = Vec(block.indptr), ids = Vec(block.indices);
    ASSERT_EQ(block.num_dst(), 30);
    EXPECT_EQ(block.num_src, static_cast<int64_t>(nodes.size()));
    EXPECT_TRUE(std::equal(dst.begin(), dst.end(), nodes.begin()));
    EXPECT_EQ(std::set<int64_t>(nodes.begin(), nodes.end()).size(), nodes.size());
    for (int64_t r = 0; r < 30; ++r) {
      std::vector<int64_t> got;
      for (int64_t e = ptr[r]; e < ptr[r + 1]; ++e) got.push_back(nodes[ids[e]]);
      EXPECT_EQ(got, g.adj[dst[r]]) << "row " << r;
    }

    // All nodes in order: local ids are global ids, so the block is the graph.
    std::vector<int64_t> all(200);
    for (int64_t i = 0; i < 200; ++i) all[i] = i;
    ASSERT_OK(sampler.FullNeighborBlock(ctx, I64(all), &block, &src));
    EXPECT_EQ(Vec(src), all);
    EXPECT_EQ(Vec(block.indptr), Vec(g.csr.indptr));
    std::vector<int64_t> flat;
    for (const auto& row : g.adj) flat.insert(flat.end(), row.begin(), row.end());
    EXPECT_EQ(Vec(block.indices), flat);
    EXPECT_EQ(block.num_src, 200);

    EXPECT_ERROR_CONTAINS(sampler.FullNeighborBlock(ctx, I64({3, 3}), &block, &src), "dst_nodes[1] = 3",
                          "repeats dst_nodes[0]");
  }
}

// ---- resident sampling ----

// g with every row filtered to the sources the mask allows.
TestGraph Filtered(const TestGraph& g, const Tensor& mask) {
  TestGraph f;
  f.adj.resize(g.adj.size());
  const uint8_t* m = mask.data<uint8_t>();
  for (size_t v = 0; v < g.adj.size(); ++v) {
    for (int64_t u : g.adj[v]) {
      if (m[u] != 0) f.adj[v].push_back(u);
    }
  }
  return f;
}

TEST(NeighborSampler, ResidentSamplingStaysInTheResidentPartitions) {
  const TestGraph g = RandomGraph(3000, 25, 31);
  std::vector<int64_t> offsets;
  for (int p = 0; p <= 12; ++p) offsets.push_back(250 * p);
  std::vector<int64_t> train = DistinctSeeds(3000, 900, 2);
  PartitionOrder order(I64(train), offsets, 64, 9, 3);
  ASSERT_OK(order.status());
  const std::vector<int64_t> fanouts{6, 4, 3};
  NeighborSampler sampler(g.csr, fanouts, 17);
  NeighborSampler plain(g.csr, fanouts, 17);
  ThreadPool one(1), three(3);
  NeighborSampler sampler3(g.csr, fanouts, 17);
  ResidentMask mask;
  int64_t masked_edges = 0, plain_edges = 0;
  for (int64_t b = 0; b < order.num_batches(); ++b) {
    const Tensor seeds = order.Batch(1, b);
    ASSERT_OK(mask.Set(order.offsets(), order.ResidentPartitions(1, b)));
    SampledBatch got, got3, full;
    ASSERT_OK(sampler.Sample(CpuContext(0, &one), seeds, 1, b, &got, &mask.mask()));
    // Against the graph restricted to resident sources: counts are
    // min(fanout, resident in-degree), draws distinct resident neighbours.
    CheckBatch(Filtered(g, mask.mask()), Vec(seeds), fanouts, got);
    const uint8_t* m = mask.mask().data<uint8_t>();
    for (int64_t v : Vec(got.input_nodes)) ASSERT_NE(m[v], 0) << "batch " << b << ": node " << v << " not resident";
    ASSERT_OK(sampler3.Sample(CpuContext(0, &three), seeds, 1, b, &got3, &mask.mask()));
    ExpectSameBatch(got, got3);
    ASSERT_OK(plain.Sample(CpuContext(0, &one), seeds, 1, b, &full));
    masked_edges += got.sampled_edges;
    plain_edges += full.sampled_edges;
  }
  // A quarter of the graph is resident: far fewer edges than full sampling.
  EXPECT_LT(masked_edges, plain_edges);
}

TEST(NeighborSampler, AllOnesMaskChangesNothing) {
  const TestGraph g = RandomGraph(2000, 30, 5, DType::kI32);
  const std::vector<int64_t> seeds = DistinctSeeds(2000, 300, 6);
  const std::vector<int64_t> fanouts{10, 5};
  NeighborSampler sampler(g.csr, fanouts, 3);
  ResidentMask mask;
  ASSERT_OK(mask.Set({0, 700, 2000}, {1, 0}));
  ThreadPool two(2);
  SampledBatch a, b;
  ASSERT_OK(sampler.Sample(CpuContext(0, &two), I64(seeds), 2, 7, &a));
  ASSERT_OK(sampler.Sample(CpuContext(0, &two), I64(seeds), 2, 7, &b, &mask.mask()));
  ExpectSameBatch(a, b);
}

TEST(NeighborSampler, ResidentSamplingErrors) {
  const TestGraph g = RandomGraph(100, 5, 1);
  NeighborSampler sampler(g.csr, {3, 2}, 1);
  ResidentMask mask;
  ASSERT_OK(mask.Set({0, 50, 100}, {0}));
  const ExecContext ctx = CpuContext(1);
  SampledBatch out;
  EXPECT_ERROR_CONTAINS(sampler.Sample(ctx, I64({3, 77, 60}), 0, 0, &out, &mask.mask()),
                        "NeighborSampler: seeds[1] = 77 is not resident (source_mask is 0 there)");
  const Tensor small = Tensor::Zeros({99}, DType::kU8);
  EXPECT_ERROR_CONTAINS(sampler.Sample(ctx, I64({3}), 0, 0, &out, &small),
                        "NeighborSampler: source_mask has 99 entries, expected one per graph node (100)");
  const Tensor f32 = Tensor::Zeros({100}, DType::kF32);
  EXPECT_ERROR_CONTAINS(sampler.Sample(ctx, I64({3}), 0, 0, &out, &f32),
                        "NeighborSampler: source_mask: expected dtype u8, got f32");
  // The sampler recovers: a good batch after the errors.
  ASSERT_OK(sampler.Sample(ctx, I64({3, 4}), 0, 0, &out, &mask.mask()));
  EXPECT_EQ(Vec(out.seeds), (std::vector<int64_t>{3, 4}));
}

}  // namespace
}  // namespace foresight::sampler
