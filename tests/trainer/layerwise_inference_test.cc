// Layer-wise inference through RowStores: the same bits as the in-memory
// algorithm it replaced (kept below as the reference) whether the hidden
// layers stay in RAM or go to scratch files, and the same up to float
// rounding with only the needed rows computed; gcn chunked equals gcn over
// the whole graph; scratch files are removed, also on error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "foresight/autograd/tape.h"
#include "foresight/kernels/ops.h"
#include "foresight/storage/row_store.h"
#include "layerwise_inference.h"
#include "needed_rows.h"
#include "node_data.h"
#include "scratch_rows.h"
#include "testing/testing.h"

namespace foresight::trainer::internal {
namespace {

using autograd::GraphBlock;
using autograd::Tape;
using autograd::Var;
using foresight::testing::TempDir;

constexpr int64_t kNodes = 300;
constexpr int64_t kFeatures = 6;

// A graph by destination with varied degrees: isolated nodes, a few hubs
// that many nodes point to, some self loops.
kernels::Csr RandomGraph(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t deg = v % 17 == 0 ? 0 : static_cast<int64_t>(rng() % 9);
    for (int64_t k = 0; k < deg; ++k) {
      const uint64_t r = rng() % 10;
      const int64_t u = r < 2 ? static_cast<int64_t>(rng() % 3) : r == 2 ? v : static_cast<int64_t>(rng() % n);
      indices.push_back(static_cast<int32_t>(u));
    }
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  kernels::Csr g;
  g.num_src = n;
  g.indptr = Tensor::Empty({n + 1}, DType::kI64);
  std::memcpy(g.indptr.raw_data(), indptr.data(), indptr.size() * sizeof(int64_t));
  g.indices = Tensor::Empty({static_cast<int64_t>(indices.size())}, DType::kI32);
  std::memcpy(g.indices.raw_data(), indices.data(), indices.size() * sizeof(int32_t));
  return g;
}

Tensor RandomFeatures(int64_t n, int64_t f, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t = Tensor::Empty({n, f}, DType::kF32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

Tensor Ids(const std::vector<int64_t>& v) {
  Tensor t = Tensor::Empty({static_cast<int64_t>(v.size())}, DType::kI64);
  std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

std::unique_ptr<GnnModel> MakeModel(const std::string& kind, int layers) {
  ModelConfig c;
  c.kind = kind;
  c.in_features = kFeatures;
  c.num_classes = 5;
  c.hidden = 12;
  c.layers = layers;
  c.heads = 2;
  c.seed = 11;
  auto m = CreateModel(c);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

// ---- the reference: the in-memory algorithm before RowStores ----

StatusOr<Tensor> ReferenceLayer(const ExecContext& ctx, GnnModel& model, int layer,
                                sampler::NeighborSampler& sampler, const Tensor& h, const Tensor& dst_ids,
                                int64_t chunk_size) {
  const int64_t n_dst = dst_ids.defined() ? dst_ids.numel() : sampler.graph().num_dst();
  Tensor out = Tensor::Empty({n_dst, model.LayerOutputDim(layer)}, DType::kF32);
  for (int64_t begin = 0; begin < n_dst; begin += chunk_size) {
    const int64_t end = std::min(n_dst, begin + chunk_size);
    const Tensor ids = dst_ids.defined() ? dst_ids.Slice(0, begin, end) : IdRange(begin, end);
    kernels::Csr block_csr;
    Tensor src_nodes;
    FS_RETURN_IF_ERROR(sampler.FullNeighborBlock(ctx, ids, &block_csr, &src_nodes));
    Tensor x = Tensor::Empty({src_nodes.numel(), model.LayerInputDim(layer)}, DType::kF32);
    FS_RETURN_IF_ERROR(kernels::GatherRows(ctx, h, src_nodes, &x));
    GraphBlock block(std::move(block_csr));
    Tape tape(ctx, /*training=*/false, /*record=*/false);
    FS_ASSIGN_OR_RETURN(Var y, model.ForwardLayer(tape, layer, block, Var(x)));
    Tensor rows = out.Slice(0, begin, end);
    FS_RETURN_IF_ERROR(rows.CopyFrom(y.value()));
  }
  return out;
}

StatusOr<LayerwiseOutputs> Reference(const ExecContext& ctx, GnnModel& model, sampler::NeighborSampler& sampler,
                                     const Tensor& features, int64_t chunk, const std::vector<Tensor>& groups) {
  LayerwiseOutputs out;
  Tensor h = features;
  const int last = model.num_layers() - 1;
  for (int l = 0; l < last; ++l) {
    FS_ASSIGN_OR_RETURN(h, ReferenceLayer(ctx, model, l, sampler, h, Tensor(), chunk));
  }
  out.embeddings = h;
  if (groups.empty()) {
    FS_ASSIGN_OR_RETURN(Tensor all, ReferenceLayer(ctx, model, last, sampler, h, Tensor(), chunk));
    out.logits.push_back(all);
  }
  for (const Tensor& ids : groups) {
    FS_ASSIGN_OR_RETURN(Tensor rows, ReferenceLayer(ctx, model, last, sampler, h, ids, chunk));
    out.logits.push_back(rows);
  }
  return out;
}

bool Bitwise(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// Computing only the needed rows puts each row at another position of the
// hidden layers' GEMM calls than the reference does, and some BLAS kernels
// (OpenBLAS's Haswell and Zen sgemm; oneDNN's for one-row calls) round a row
// differently depending on its position in the call. So the needed-rows
// path is held to float rounding, not bits; every path that computes all
// rows must still match bit for bit.
::testing::AssertionResult CloseToRounding(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape()) return ::testing::AssertionFailure() << "shapes differ";
  const float* g = got.data<float>();
  const float* w = want.data<float>();
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (std::fabs(g[i] - w[i]) > 1e-5f * (1.0f + std::fabs(w[i]))) {
      return ::testing::AssertionFailure() << "element " << i << ": " << g[i] << " vs " << w[i];
    }
  }
  return ::testing::AssertionSuccess();
}

int64_t FilesIn(const std::string& dir) {
  int64_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++n;
  }
  return n;
}

struct Fixture {
  ThreadPool pool{3};
  ExecContext ctx = CpuContext(0, &pool);
  kernels::Csr graph = RandomGraph(kNodes, 3);
  Tensor features = RandomFeatures(kNodes, kFeatures, 4);
  sampler::NeighborSampler sampler{graph, {-1, -1, -1}, 0};
  GraphBlock whole{graph};
};

class LayerwiseInferenceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LayerwiseInferenceTest, SameBitsInRamOnDiskAndWithNeededRowsOnly) {
  Fixture f;
  auto model = MakeModel(GetParam(), 3);
  // Groups small enough that the needed rows are a strict subset below the
  // last layer (node 5's and 200's neighbourhoods), plus a larger one.
  std::vector<int64_t> big;
  for (int64_t v = kNodes - 1; v >= 0; v -= 7) big.push_back(v);
  const std::vector<Tensor> groups = {Ids({5, 200}), Ids(big)};
  ASSERT_OK_AND_ASSIGN(std::vector<LayerRows> needed, NeededRows(f.ctx, f.graph, 3, {Ids({5, 200})}));
  ASSERT_FALSE(needed[1].all);
  ASSERT_LT(needed[1].count(kNodes), kNodes);

  for (int64_t chunk : {7, 64}) {
    ASSERT_OK_AND_ASSIGN(LayerwiseOutputs want_all, Reference(f.ctx, *model, f.sampler, f.features, chunk, {}));
    ASSERT_OK_AND_ASSIGN(LayerwiseOutputs want_groups,
                         Reference(f.ctx, *model, f.sampler, f.features, chunk, groups));
    ASSERT_OK_AND_ASSIGN(auto store, storage::MemoryRowStore(f.features, /*writable=*/false));
    TempDir scratch;
    for (int64_t budget : {int64_t{0}, int64_t{1} << 30}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk) + " budget " + std::to_string(budget));
      const InferenceMemory memory{budget, scratch.path()};
      LayerwiseOutputs got;
      ASSERT_OK(LayerwiseInference(f.ctx, *model, f.sampler, f.whole, *store, chunk, {}, /*want_embeddings=*/false,
                                   /*whole_graph_per_layer=*/false, memory, &got));
      ASSERT_EQ(got.logits.size(), 1u);
      EXPECT_TRUE(Bitwise(got.logits[0], want_all.logits[0]));
      EXPECT_FALSE(got.embeddings.defined());

      ASSERT_OK(LayerwiseInference(f.ctx, *model, f.sampler, f.whole, *store, chunk, groups,
                                   /*want_embeddings=*/false, false, memory, &got));
      ASSERT_EQ(got.logits.size(), 2u);
      EXPECT_TRUE(CloseToRounding(got.logits[0], want_groups.logits[0]));
      EXPECT_TRUE(CloseToRounding(got.logits[1], want_groups.logits[1]));

      ASSERT_OK(LayerwiseInference(f.ctx, *model, f.sampler, f.whole, *store, chunk, groups,
                                   /*want_embeddings=*/true, false, memory, &got));
      EXPECT_TRUE(Bitwise(got.embeddings, want_all.embeddings));
      EXPECT_TRUE(Bitwise(got.logits[1], want_groups.logits[1]));
      EXPECT_EQ(FilesIn(scratch.path()), 0);
    }
    // The Tensor overload (default memory) gives the same bits too.
    LayerwiseOutputs got;
    ASSERT_OK(LayerwiseInference(f.ctx, *model, f.sampler, f.whole, f.features, chunk, groups, true, false, &got));
    EXPECT_TRUE(Bitwise(got.logits[0], want_groups.logits[0]));
    EXPECT_TRUE(Bitwise(got.embeddings, want_all.embeddings));
  }
}

// Hubs: nodes 0, 1 and 2 list 150 in-neighbours each, so a chunk of 2
// destinations (at most 32 + 2 sources by the chunking bound) is cut at
// every hub, and a hub is a chunk of its own. Same bits as the reference,
// which chunks by count only.
TEST_P(LayerwiseInferenceTest, HubsCutChunksWithoutChangingResults) {
  Fixture f;
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices;
  std::mt19937_64 rng(8);
  for (int64_t v = 0; v < kNodes; ++v) {
    const int64_t deg = v < 3 ? 150 : static_cast<int64_t>(rng() % 5);
    for (int64_t k = 0; k < deg; ++k) indices.push_back(static_cast<int32_t>(rng() % kNodes));
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  kernels::Csr hubs;
  hubs.num_src = kNodes;
  hubs.indptr = Ids(indptr);
  hubs.indices = Tensor::Empty({static_cast<int64_t>(indices.size())}, DType::kI32);
  std::memcpy(hubs.indices.raw_data(), indices.data(), indices.size() * sizeof(int32_t));
  EXPECT_EQ(MaxChunkSources(hubs.indptr, 2), 151);   // a hub alone
  EXPECT_EQ(MaxChunkSources(hubs.indptr, 64), 16 * 64 + 64);
  sampler::NeighborSampler sampler{hubs, {-1, -1}, 0};
  GraphBlock whole{hubs};
  auto model = MakeModel(GetParam(), 2);
  const std::vector<Tensor> groups = {Ids({0, 7, 1, 2, 150, 299})};
  ASSERT_OK_AND_ASSIGN(LayerwiseOutputs want, Reference(f.ctx, *model, sampler, f.features, 64, groups));
  ASSERT_OK_AND_ASSIGN(auto store, storage::MemoryRowStore(f.features, /*writable=*/false));
  for (int64_t chunk : {1, 2, 5}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    LayerwiseOutputs got;
    ASSERT_OK(LayerwiseInference(f.ctx, *model, sampler, whole, *store, chunk, groups, /*want_embeddings=*/true,
                                 false, InferenceMemory(), &got));
    // Another chunk size puts rows at other positions of each layer's GEMM
    // calls, and some sgemm kernels round a row by its position (seen on
    // a Xeon for the groups' logits of both models and GAT's embeddings):
    // float rounding, not bits. A chunk that loses or repeats in-edges of a
    // hub is far outside it.
    EXPECT_TRUE(CloseToRounding(got.logits[0], want.logits[0]));
    EXPECT_TRUE(CloseToRounding(got.embeddings, want.embeddings));
  }
}

INSTANTIATE_TEST_SUITE_P(Models, LayerwiseInferenceTest, ::testing::Values("sage", "gat"));

TEST(LayerwiseInferenceStoreTest, F16FeaturesFromADiskStore) {
  Fixture f;
  auto model = MakeModel("sage", 2);
  Tensor half = Tensor::Empty({kNodes, kFeatures}, DType::kF16);
  for (int64_t i = 0; i < half.numel(); ++i) {
    half.data<Half>()[i].bits = FloatToHalf(f.features.data<float>()[i]);
  }
  ASSERT_OK_AND_ASSIGN(LayerwiseOutputs want, Reference(f.ctx, *model, f.sampler, half, 16, {}));
  TempDir dir;
  storage::RowStoreOptions o;
  o.kind = storage::RowStoreKind::kDisk;
  o.path = dir.File("features.npy");
  o.writable = true;
  o.create = true;
  o.dtype = DType::kF16;
  o.row_width = kFeatures;
  o.rows = kNodes;
  o.direct_io = false;
  ASSERT_OK_AND_ASSIGN(auto disk, storage::OpenRowStore(o));
  std::vector<storage::RowRequest> reqs;
  for (int64_t i = 0; i < kNodes; ++i) {
    reqs.push_back({i, static_cast<char*>(half.raw_data()) + i * kFeatures * 2});
  }
  ASSERT_OK(disk->Write(reqs));
  TempDir scratch;
  LayerwiseOutputs got;
  ASSERT_OK(LayerwiseInference(f.ctx, *model, f.sampler, f.whole, *disk, 16, {}, true, false,
                               InferenceMemory{0, scratch.path()}, &got));
  EXPECT_TRUE(Bitwise(got.logits[0], want.logits[0]));
  EXPECT_TRUE(Bitwise(got.embeddings, want.embeddings));
}

TEST(LayerwiseInferenceStoreTest, GcnChunkedMatchesWholeGraph) {
  Fixture f;
  auto model = MakeModel("gcn", 3);
  ASSERT_OK_AND_ASSIGN(auto store, storage::MemoryRowStore(f.features, false));
  LayerwiseOutputs whole;
  ASSERT_OK(LayerwiseInference(f.ctx, *model, f.sampler, f.whole, *store, 32, {}, true,
                               /*whole_graph_per_layer=*/true, InferenceMemory(), &whole));
  TempDir scratch;
  const std::vector<Tensor> groups = {Ids({5, 200, 17}), IdRange(0, kNodes)};
  for (int64_t chunk : {9, 1000}) {
    LayerwiseOutputs got;
    ASSERT_OK(LayerwiseInference(f.ctx, *model, f.sampler, f.whole, *store, chunk, groups, false, false,
                                 InferenceMemory{0, scratch.path()}, &got));
    double max_abs = 0;
    for (int64_t i = 0; i < whole.logits[0].numel(); ++i) {
      max_abs = std::max(max_abs, std::fabs(static_cast<double>(whole.logits[0].data<float>()[i])));
    }
    ASSERT_GT(max_abs, 0.0);
    const Tensor& all = got.logits[1];
    for (int64_t i = 0; i < all.numel(); ++i) {
      const double w = whole.logits[0].data<float>()[i], g = all.data<float>()[i];
      ASSERT_LE(std::fabs(w - g), 1e-6 * std::max(std::fabs(w), max_abs)) << "element " << i << " chunk " << chunk;
    }
    // The small group (whose hidden layers hold only its neighbourhood)
    // too; its chunks differ from the full group's, so gcn's choice of
    // multiplication order may differ: equal up to rounding.
    const int64_t c = all.size(1);
    const std::vector<int64_t> small = {5, 200, 17};
    for (size_t r = 0; r < small.size(); ++r) {
      for (int64_t k = 0; k < c; ++k) {
        const double w = whole.logits[0].data<float>()[small[r] * c + k];
        const double g = got.logits[0].data<float>()[static_cast<int64_t>(r) * c + k];
        ASSERT_LE(std::fabs(w - g), 1e-6 * std::max(std::fabs(w), max_abs)) << "node " << small[r];
      }
    }
  }
  // Chunks normalised with their own degrees (the old algorithm) are far
  // from the whole graph: the check above can fail.
  ASSERT_OK_AND_ASSIGN(LayerwiseOutputs blockwise, Reference(f.ctx, *model, f.sampler, f.features, 9, {}));
  double worst = 0;
  for (int64_t i = 0; i < blockwise.logits[0].numel(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(blockwise.logits[0].data<float>()[i]) -
                                      whole.logits[0].data<float>()[i]));
  }
  EXPECT_GT(worst, 1e-3);
}

TEST(LayerwiseInferenceStoreTest, ScratchFilesAreRemovedOnError) {
  Fixture f;
  auto model = MakeModel("sage", 3);
  ASSERT_OK_AND_ASSIGN(auto store, storage::MemoryRowStore(f.features, false));
  TempDir scratch;
  LayerwiseOutputs got;
  // Repeated ids fail in the last layer, after two hidden layers went to
  // scratch files.
  EXPECT_ERROR_CONTAINS(LayerwiseInference(f.ctx, *model, f.sampler, f.whole, *store, 8, {Ids({4, 9, 4})}, false,
                                           false, InferenceMemory{0, scratch.path()}, &got),
                        "dst_nodes[2] = 4 repeats dst_nodes[0]");
  EXPECT_EQ(FilesIn(scratch.path()), 0);
  EXPECT_ERROR_CONTAINS(LayerwiseInference(f.ctx, *model, f.sampler, f.whole, *store, 8, {Ids({4, kNodes})}, false,
                                           false, InferenceMemory{0, scratch.path()}, &got),
                        "output group 0 has id 300 at position 1, outside [0, 300)");
  EXPECT_ERROR_CONTAINS(LayerwiseInference(f.ctx, *model, f.sampler, f.whole, *store, 8, {}, false, false,
                                           InferenceMemory{0, "/nonexistent-dir-e2"}, &got),
                        "scratch file", "/nonexistent-dir-e2");
  EXPECT_ERROR_CONTAINS(LayerwiseInference(f.ctx, *model, f.sampler, f.whole, *store, 0, {}, false, false,
                                           InferenceMemory(), &got),
                        "chunk size must be >= 1");
  Tensor narrow = RandomFeatures(kNodes, kFeatures - 1, 1);
  ASSERT_OK_AND_ASSIGN(auto narrow_store, storage::MemoryRowStore(narrow, false));
  EXPECT_ERROR_CONTAINS(LayerwiseInference(f.ctx, *model, f.sampler, f.whole, *narrow_store, 8, {}, false, false,
                                           InferenceMemory(), &got),
                        "feature rows of width 5 for a model whose input width is 6");
}

TEST(ScratchRowsTest, InRamOrInAFileThatIsGoneAfterwards) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(auto ram, ScratchRows::Create(10, 4, /*in_ram=*/true, dir.path()));
  EXPECT_TRUE(ram->in_ram());
  EXPECT_EQ(ram->store().backend(), "memory");
  EXPECT_EQ(ram->bytes(), 160);
  EXPECT_EQ(ram->tensor().size(0), 10);
  {
    ASSERT_OK_AND_ASSIGN(auto disk, ScratchRows::Create(10, 4, /*in_ram=*/false, dir.path()));
    EXPECT_FALSE(disk->in_ram());
    EXPECT_NE(disk->store().backend().find("disk"), std::string::npos);
    // Written and read back through the store; the name is already gone.
    std::vector<float> row = {1, 2, 3, 4}, back(4);
    ASSERT_OK(disk->store().Write({{7, row.data()}}));
    ASSERT_OK(disk->store().Read({{7, back.data()}}));
    EXPECT_EQ(back, row);
    EXPECT_EQ(FilesIn(dir.path()), 0);
  }
  EXPECT_EQ(FilesIn(dir.path()), 0);
}

TEST(NeededRowsTest, OutputsAndTheirInNeighboursLayerByLayer) {
  // 0 <- 1, 1 <- 2, 2 <- 3, 3 <- 4, 4 <- {}, 5 <- 0.
  kernels::Csr g;
  g.num_src = 6;
  g.indptr = Ids({0, 1, 2, 3, 4, 4, 5});
  g.indices = Ids({1, 2, 3, 4, 0});
  ASSERT_OK_AND_ASSIGN(std::vector<LayerRows> rows, NeededRows(CpuContext(), g, 4, {Ids({0}), Ids({5})}));
  ASSERT_EQ(rows.size(), 3u);
  auto ids = [](const LayerRows& r) {
    std::vector<int64_t> out(static_cast<size_t>(r.count(6)));
    r.Ids(0, r.count(6), out.data());
    return out;
  };
  EXPECT_EQ(ids(rows[2]), (std::vector<int64_t>{0, 1, 5}));
  EXPECT_EQ(ids(rows[1]), (std::vector<int64_t>{0, 1, 2, 5}));
  EXPECT_EQ(ids(rows[0]), (std::vector<int64_t>{0, 1, 2, 3, 5}));
  EXPECT_EQ(rows[0].Rank(3), 3);
  EXPECT_EQ(rows[0].Rank(5), 4);
  EXPECT_FALSE(rows[0].Has(4));
  EXPECT_TRUE(rows[0].Has(5));
  // Covering every node makes a layer, and those below it, `all`.
  ASSERT_OK_AND_ASSIGN(rows, NeededRows(CpuContext(), g, 6, {Ids({0, 5})}));
  EXPECT_FALSE(rows[4].all);
  EXPECT_TRUE(rows[0].all);
  EXPECT_TRUE(rows[1].all);
  ASSERT_OK_AND_ASSIGN(rows, NeededRows(CpuContext(), g, 3, {}));
  EXPECT_TRUE(rows[0].all && rows[1].all);
}

// The set's positions and ids against a plain list, on a graph spanning
// many 512-node blocks, some of them empty, and at every range boundary.
TEST(NeededRowsTest, RankAndIdsMatchAPlainList) {
  const int64_t n = 5000;
  // Node v's only in-neighbour is v + 1 (a path), so the 2-hop set of the
  // outputs is each output and the two nodes after it.
  std::vector<int64_t> indptr(n + 1), indices;
  for (int64_t v = 0; v < n; ++v) {
    indptr[v] = static_cast<int64_t>(indices.size());
    if (v + 1 < n) indices.push_back(v + 1);
  }
  indptr[n] = static_cast<int64_t>(indices.size());
  kernels::Csr g;
  g.num_src = n;
  g.indptr = Ids(indptr);
  g.indices = Ids(indices);
  std::vector<int64_t> outputs;
  for (int64_t v = 0; v < n; v += (v % 3 == 0 ? 7 : 61)) {
    if (v < 1500 || v > 2700) outputs.push_back(v);  // blocks 3 and 4 stay empty
  }
  outputs.push_back(n - 1);
  ASSERT_OK_AND_ASSIGN(std::vector<LayerRows> rows, NeededRows(CpuContext(), g, 3, {Ids(outputs)}));
  std::vector<bool> want(n, false);
  for (int64_t v : outputs) {
    for (int64_t k = 0; k <= 2 && v + k < n; ++k) want[static_cast<size_t>(v + k)] = true;
  }
  std::vector<int64_t> list;
  for (int64_t v = 0; v < n; ++v) {
    if (want[static_cast<size_t>(v)]) list.push_back(v);
  }
  const LayerRows& r = rows[0];
  ASSERT_FALSE(r.all);
  ASSERT_EQ(r.count(n), static_cast<int64_t>(list.size()));
  int64_t below = 0;
  for (int64_t v = 0; v < n; ++v) {
    ASSERT_EQ(r.Has(v), want[static_cast<size_t>(v)]) << v;
    ASSERT_EQ(r.Rank(v), below) << v;
    below += want[static_cast<size_t>(v)] ? 1 : 0;
  }
  const int64_t count = r.count(n);
  for (int64_t begin : {int64_t{0}, int64_t{1}, int64_t{63}, int64_t{64}, int64_t{200}, count / 2, count - 1}) {
    for (int64_t len : {int64_t{0}, int64_t{1}, int64_t{65}, int64_t{600}, count}) {
      const int64_t end = std::min(count, begin + len);
      std::vector<int64_t> got(static_cast<size_t>(end - begin));
      r.Ids(begin, end, got.data());
      EXPECT_EQ(got, std::vector<int64_t>(list.begin() + begin, list.begin() + end)) << begin << ".." << end;
    }
  }
}

}  // namespace
}  // namespace foresight::trainer::internal
