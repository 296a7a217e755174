// Paged topology: a sampler over a mapped CSR that reads the pages of each
// hop's rows into anonymous shadows and frees them after each call draws
// the same batches as one over the CSR in RAM, loads exactly the pages of
// its frontiers' rows (no others: in guard mode a read of any other page
// would crash), leaves none resident between calls, and is refused on a CSR
// that is not a read-only file mapping.
#include <algorithm>
#include <set>
#include <utility>
#include <random>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/mapped_pages.h"
#include "foresight/core/page_shadow.h"
#include "foresight/core/process_memory.h"
#include "foresight/core/thread_pool.h"
#include "foresight/sampler/neighbor_sampler.h"
#include "foresight/storage/npy.h"
#include "testing/testing.h"

namespace foresight::sampler {
namespace {

// 20000 nodes, mean in-degree 20 (indices 3.2 MB, 782 pages), random rows.
kernels::Csr RandomGraph() {
  constexpr int64_t kNodes = 20000;
  std::mt19937_64 rng(7);
  std::vector<int64_t> indptr(1, 0), indices;
  for (int64_t v = 0; v < kNodes; ++v) {
    const int64_t degree = static_cast<int64_t>(rng() % 41);
    for (int64_t k = 0; k < degree; ++k) indices.push_back(static_cast<int64_t>(rng() % kNodes));
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  kernels::Csr g;
  g.indptr = testing::TensorOf(indptr);
  g.indices = testing::TensorOf(indices);
  g.num_src = kNodes;
  return g;
}

std::vector<int64_t> Vec(const Tensor& t) { return testing::VectorOf<int64_t>(t); }

void ExpectSameBatch(const SampledBatch& a, const SampledBatch& b) {
  EXPECT_EQ(Vec(a.seeds), Vec(b.seeds));
  EXPECT_EQ(Vec(a.input_nodes), Vec(b.input_nodes));
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (size_t l = 0; l < a.blocks.size(); ++l) {
    EXPECT_EQ(Vec(a.blocks[l].indptr), Vec(b.blocks[l].indptr)) << "block " << l;
    EXPECT_EQ(Vec(a.blocks[l].indices), Vec(b.blocks[l].indices)) << "block " << l;
    EXPECT_EQ(a.blocks[l].num_src, b.blocks[l].num_src) << "block " << l;
  }
}

class PagedTopologyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    memory_ = RandomGraph();
    ASSERT_OK(storage::SaveNpy(dir_.File("indptr.npy"), memory_.indptr));
    ASSERT_OK(storage::SaveNpy(dir_.File("indices.npy"), memory_.indices));
  }
  // The same graph, mapped from its files.
  kernels::Csr Mapped() {
    kernels::Csr g;
    auto indptr = storage::MmapNpy(dir_.File("indptr.npy"));
    auto indices = storage::MmapNpy(dir_.File("indices.npy"));
    EXPECT_OK(indptr.status());
    EXPECT_OK(indices.status());
    if (!indptr.ok() || !indices.ok()) return g;
    g.indptr = *indptr;
    g.indices = *indices;
    g.num_src = memory_.num_src;
    return g;
  }
  static Tensor Seeds(int64_t batch) {
    std::vector<int64_t> s;
    for (int64_t i = 0; i < 256; ++i) s.push_back((batch * 7919 + i * 73) % 20000);
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    return testing::TensorOf(s);
  }

  testing::TempDir dir_;
  kernels::Csr memory_;
};

TEST_F(PagedTopologyTest, SameSamplesAsTheCsrInMemory) {
  NeighborSampler reference(memory_, {10, 5}, 3);
  NeighborSampler mapped(Mapped(), {10, 5}, 3);
  NeighborSampler paged(Mapped(), {10, 5}, 3);
  ASSERT_OK(paged.PageTopology());
  EXPECT_TRUE(paged.paged_topology());
  EXPECT_FALSE(mapped.paged_topology());
  for (int64_t b = 0; b < 6; ++b) {
    SCOPED_TRACE("batch " + std::to_string(b));
    SampledBatch want, got_mapped, got_paged;
    ASSERT_OK(reference.Sample(CpuContext(0), Seeds(b), 1, b, &want));
    ASSERT_OK(mapped.Sample(CpuContext(0), Seeds(b), 1, b, &got_mapped));
    ASSERT_OK(paged.Sample(CpuContext(0), Seeds(b), 1, b, &got_paged));
    ExpectSameBatch(want, got_mapped);
    ExpectSameBatch(want, got_paged);
  }
}

// The paged sampler never touches the file mapping (it preads into its
// shadows), so none of the files' pages are mapped; the mapped sampler's
// stay. Each sampler holds the only mapping of the files while it samples
// (the mapping goes with its last view).
TEST_F(PagedTopologyTest, PagedLeavesNoPagesResidentMappedKeepsThem) {
  {
    NeighborSampler mapped(Mapped(), {10, 5}, 3);
    for (int64_t b = 0; b < 3; ++b) {
      SampledBatch batch;
      ASSERT_OK(mapped.Sample(CpuContext(0), Seeds(b), 1, b, &batch));
    }
    EXPECT_GT(MappedRssBytes(dir_.path()), 64 * 4096) << "the mapped sampler's pages should stay resident";
  }
  NeighborSampler paged(Mapped(), {10, 5}, 3);
  ASSERT_OK(paged.PageTopology());
  for (int64_t b = 0; b < 3; ++b) {
    SampledBatch batch;
    ASSERT_OK(paged.Sample(CpuContext(0), Seeds(b), 1, b, &batch));
    // At most each file's .npy header page stays (outside the arrays: the
    // kernel's fault-around maps it with the first data page).
    EXPECT_LE(MappedRssBytes(dir_.path()), 2 * 4096) << "batch " << b;
  }
}

TEST_F(PagedTopologyTest, FullNeighborBlockIsUnchangedAndReleases) {
  NeighborSampler reference(memory_, {-1}, 0);
  NeighborSampler paged(Mapped(), {-1}, 0);
  ASSERT_OK(paged.PageTopology());
  kernels::Csr want, got;
  Tensor want_src, got_src;
  ASSERT_OK(reference.FullNeighborBlock(CpuContext(0), Seeds(2), &want, &want_src));
  ASSERT_OK(paged.FullNeighborBlock(CpuContext(0), Seeds(2), &got, &got_src));
  EXPECT_EQ(Vec(want.indptr), Vec(got.indptr));
  EXPECT_EQ(Vec(want.indices), Vec(got.indices));
  EXPECT_EQ(Vec(want_src), Vec(got_src));
  EXPECT_LE(MappedRssBytes(dir_.path()), 2 * 4096);  // the header pages at most
}

// The pages a paged call must load: for each frontier node v (each hop's
// destinations: a prefix of input_nodes), indptr's pages holding v and
// v + 1, and indices' pages holding v's row. The pages are the files'
// (an array starts after its .npy header, at `*_offset` in its file).
int64_t PagesOf(const kernels::Csr& g, const std::vector<int64_t>& frontier, int64_t indptr_offset,
                int64_t indices_offset) {
  const int64_t page = static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  const int64_t* ip = g.indptr.data<int64_t>();
  std::set<std::pair<int, int64_t>> pages;
  for (int64_t v : frontier) {
    pages.insert({0, (indptr_offset + v * 8) / page});
    pages.insert({0, (indptr_offset + (v + 2) * 8 - 1) / page});
    if (ip[v + 1] > ip[v]) {
      for (int64_t k = (indices_offset + ip[v] * 8) / page; k <= (indices_offset + ip[v + 1] * 8 - 1) / page; ++k) {
        pages.insert({1, k});
      }
    }
  }
  return static_cast<int64_t>(pages.size());
}

TEST_F(PagedTopologyTest, LoadsExactlyTheFrontiersPagesAndFreesThem) {
  kernels::Csr mapped = Mapped();
  ASSERT_OK_AND_ASSIGN(MappedFile indptr_file, FindMappedFile(mapped.indptr.raw_data(), 8, "indptr"));
  ASSERT_OK_AND_ASSIGN(MappedFile indices_file, FindMappedFile(mapped.indices.raw_data(), 8, "indices"));
  NeighborSampler paged(mapped, {10, 5}, 3);
  ASSERT_OK(paged.PageTopology());
  ThreadPool pool(3);
  for (int64_t b = 0; b < 4; ++b) {
    SCOPED_TRACE("batch " + std::to_string(b));
    SampledBatch batch;
    ASSERT_OK(paged.Sample(CpuContext(0, &pool), Seeds(b), 1, b, &batch));
    EXPECT_EQ(paged.topology_pages_loaded(), 0) << "the call's pages are freed when it returns";
    // Hop h reads the rows of the first blocks[L-1-h].num_dst() input nodes.
    const std::vector<int64_t> input = Vec(batch.input_nodes);
    std::vector<int64_t> frontier(input.begin(), input.begin() + batch.blocks[0].num_dst());
    const int64_t want = PagesOf(memory_, frontier, indptr_file.offset, indices_file.offset);
    EXPECT_EQ(paged.last_call_topology_pages(), want);
  }
  // One node's rows: a page or two of each array, of the CSR's ~820.
  SampledBatch one;
  ASSERT_OK(paged.Sample(CpuContext(0, &pool), testing::TensorOf(std::vector<int64_t>{123}), 1, 0, &one));
  const std::vector<int64_t> input = Vec(one.input_nodes);
  const std::vector<int64_t> frontier(input.begin(), input.begin() + one.blocks[0].num_dst());
  EXPECT_EQ(paged.last_call_topology_pages(), PagesOf(memory_, frontier, indptr_file.offset, indices_file.offset));
  EXPECT_LE(paged.last_call_topology_pages(), 4 * static_cast<int64_t>(frontier.size()));
  kernels::Csr block;
  Tensor src;
  ASSERT_OK(paged.FullNeighborBlock(CpuContext(0, &pool), Seeds(1), &block, &src));
  EXPECT_EQ(paged.topology_pages_loaded(), 0);
  EXPECT_EQ(paged.last_call_topology_pages(),
            PagesOf(memory_, Vec(Seeds(1)), indptr_file.offset, indices_file.offset));
}

// With the guard, every page not loaded is PROT_NONE: a kernel read outside
// the loaded rows (e.g. drawing the next hop ahead for nodes whose rows are
// not loaded yet) would crash. Several threads, so the draws ahead run.
TEST_F(PagedTopologyTest, GuardedSamplingReadsOnlyLoadedPages) {
  NeighborSampler reference(memory_, {10, 5, 3}, 3);
  NeighborSampler paged(Mapped(), {10, 5, 3}, 3);
  ASSERT_OK(paged.PageTopology(/*guard=*/true));
  ThreadPool pool(4);
  for (int64_t b = 0; b < 4; ++b) {
    SCOPED_TRACE("batch " + std::to_string(b));
    SampledBatch want, got;
    ASSERT_OK(reference.Sample(CpuContext(0, &pool), Seeds(b), 2, b, &want));
    ASSERT_OK(paged.Sample(CpuContext(0, &pool), Seeds(b), 2, b, &got));
    ExpectSameBatch(want, got);
  }
  kernels::Csr want_block, got_block;
  Tensor want_src, got_src;
  ASSERT_OK(reference.FullNeighborBlock(CpuContext(0, &pool), Seeds(3), &want_block, &want_src));
  ASSERT_OK(paged.FullNeighborBlock(CpuContext(0, &pool), Seeds(3), &got_block, &got_src));
  EXPECT_EQ(Vec(want_block.indices), Vec(got_block.indices));
  EXPECT_EQ(Vec(want_src), Vec(got_src));
}

TEST_F(PagedTopologyTest, RefusedOnACsrInMemory) {
  NeighborSampler sampler(memory_, {10, 5}, 3);
  testing::ExpectErrorContains(sampler.PageTopology(), "PageTopology",
                               {"graph.indptr", "not in a read-only shared file mapping"});
  EXPECT_FALSE(sampler.paged_topology());
  // A CSR whose indices alone are in memory is refused too.
  kernels::Csr half = Mapped();
  half.indices = memory_.indices;
  NeighborSampler partly(half, {10, 5}, 3);
  testing::ExpectErrorContains(partly.PageTopology(), "PageTopology", {"graph.indices"});
}

}  // namespace
}  // namespace foresight::sampler
