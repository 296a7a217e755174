// Synthetic R-MAT graph with planted classes (model in generate.h). Every
// value is drawn from a Philox stream addressed by (purpose, index), so the
// parallel chunks produce the same bytes in any order on any pool size.
#include "foresight/datasets/generate.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "foresight/core/progress.h"
#include "foresight/core/rng.h"
#include "foresight/graph/csr_builder.h"
#include "foresight/storage/dataset.h"
#include "edge_split.h"
#include "permutation.h"

namespace foresight::datasets {
namespace {

using internal::CeilLog2;
using internal::FeistelPermutation;

// Streams of the generator, folded into the seed's key.
enum Stream : uint64_t {
  kEdges = 1, kFeatures = 2, kMeans = 3, kSplit = 4, kInClass = 5, kPerm = 6, kClassPerm = 7, kCommunity = 8
};

RngKey RootKey(uint64_t seed) { return RngKey::FromSeed(seed).Fold(static_cast<uint64_t>(RngPurpose::kGenerate)); }

constexpr int64_t kEdgeChunk = int64_t{1} << 16;   // edges per parallel task
constexpr int64_t kEdgeBlock = int64_t{1} << 22;   // edges buffered before the builder
constexpr int64_t kFeatureBlockBytes = int64_t{8} << 20;
constexpr int kMaxRejections = 64;

struct Model {
  const GenerateGraphOptions* o;
  RngKey edges, in_class, features, means, split;
  uint64_t perm_key, class_perm_key;
  uint64_t community_key;  // P: node -> community slot (communities only)
  int scale;
  float pa, pab, pabc;  // cumulative quadrant probabilities
  float col0;           // P(column bit = 0) = a + c
};

// Uniform 24-bit floats from a draw of 4 words; `draw` advances.
struct Uniforms {
  const RngKey* key;
  uint64_t element;
  uint64_t draw;
  Uint4 bits{};
  int used = 4;
  float Next() {
    if (used == 4) {
      bits = key->Bits(element, draw++);
      used = 0;
    }
    const uint32_t w = used == 0 ? bits.x : used == 1 ? bits.y : used == 2 ? bits.z : bits.w;
    ++used;
    return static_cast<float>(w >> 8) * (1.0f / 16777216.0f);
  }
};

// One R-MAT (row, col) draw at `scale`, redrawn while either is >= n.
void RmatPair(const Model& m, int64_t n, Uniforms* u, int64_t* row, int64_t* col) {
  for (int attempt = 0;; ++attempt) {
    int64_t r = 0, c = 0;
    for (int level = 0; level < m.scale; ++level) {
      const float x = u->Next();
      const int64_t rb = x >= m.pab ? 1 : 0;
      const int64_t cb = (x >= m.pa && x < m.pab) || x >= m.pabc ? 1 : 0;
      r = (r << 1) | rb;
      c = (c << 1) | cb;
    }
    if ((r < n && c < n) || attempt == kMaxRejections) {
      *row = r % n;  // the modulo only after 64 rejections (never in practice)
      *col = c % n;
      return;
    }
  }
}

// An R-MAT column draw over [0, n) (P(bit = 0) = a + c at each level).
int64_t RmatColumn(const Model& m, int64_t n, Uniforms* u) {
  const int scale = CeilLog2(n);
  for (int attempt = 0;; ++attempt) {
    int64_t c = 0;
    for (int level = 0; level < scale; ++level) c = (c << 1) | (u->Next() < m.col0 ? 0 : 1);
    if (c < n || attempt == kMaxRejections) return c % n;
  }
}

// Node v's group: its community (slot P(v) mod K) with communities, else
// its class (v mod C). Group g's members are the nodes whose slot (P(v), or
// v without communities) is g + groups * j.
int64_t GroupOf(const Model& m, int64_t v) {
  if (m.o->num_communities == 0) return v % m.o->num_classes;
  return FeistelPermutation(m.o->num_nodes, m.community_key)(v) % m.o->num_communities;
}

int64_t ClassOf(const Model& m, int64_t v) { return GroupOf(m, v) % m.o->num_classes; }

// Returns whether the edge's ends share a community (false without them).
bool GenerateEdge(const Model& m, int64_t e, int64_t* src, int64_t* dst) {
  const int64_t n = m.o->num_nodes;
  const bool communities = m.o->num_communities > 0;
  const int64_t groups = communities ? m.o->num_communities : m.o->num_classes;
  const FeistelPermutation perm(n, m.perm_key);
  Uniforms u{&m.edges, static_cast<uint64_t>(e), 0};
  int64_t r, c;
  RmatPair(m, n, &u, &r, &c);
  const int64_t s = perm(r);
  int64_t d = perm(c);
  const int64_t g = GroupOf(m, s);
  if (m.in_class.Uniform(static_cast<uint64_t>(e), 0) < m.o->p_in) {
    const int64_t members = (n - g + groups - 1) / groups;
    Uniforms uc{&m.edges, static_cast<uint64_t>(e), uint64_t{1} << 32};
    const int64_t j = RmatColumn(m, members, &uc);
    const FeistelPermutation group_perm(members, Mix64(m.class_perm_key ^ static_cast<uint64_t>(g)));
    const int64_t slot = g + groups * group_perm(j);
    d = communities ? FeistelPermutation(n, m.community_key).Inverse(slot) : slot;
  }
  *src = s;
  *dst = d;
  return communities && GroupOf(m, d) == g;
}

// Fills rows [begin, end) of features (f32) into out.
void GenerateFeatures(const Model& m, const std::vector<float>& means, int64_t begin, int64_t end, float* out) {
  const int64_t f = m.o->feature_dim;
  for (int64_t v = begin; v < end; ++v) {
    const float* mean = means.data() + ClassOf(m, v) * f;
    float* row = out + (v - begin) * f;
    for (int64_t j = 0; j < f; j += 4) {
      const Uint4 b = m.features.Bits(static_cast<uint64_t>(v), static_cast<uint64_t>(j / 4));
      // Box-Muller on two pairs; u1 in (0, 1] so the log is finite.
      const float u1 = (static_cast<float>(b.x >> 8) + 1.0f) * (1.0f / 16777216.0f);
      const float u2 = static_cast<float>(b.y >> 8) * (1.0f / 16777216.0f);
      const float u3 = (static_cast<float>(b.z >> 8) + 1.0f) * (1.0f / 16777216.0f);
      const float u4 = static_cast<float>(b.w >> 8) * (1.0f / 16777216.0f);
      const float r1 = std::sqrt(-2.0f * std::log(u1)), r2 = std::sqrt(-2.0f * std::log(u3));
      const float t1 = 6.28318530718f * u2, t2 = 6.28318530718f * u4;
      const float z[4] = {r1 * std::cos(t1), r1 * std::sin(t1), r2 * std::cos(t2), r2 * std::sin(t2)};
      for (int k = 0; k < 4 && j + k < f; ++k) row[j + k] = z[k] + mean[j + k];
    }
  }
}

Status Validate(const GenerateGraphOptions& o) {
  if (o.output.empty()) return InvalidArgument("generate graph: --output is required");
  if (o.num_nodes < 1) return InvalidArgument("generate graph: --nodes must be >= 1");
  if (o.num_edges < 0) return InvalidArgument("generate graph: --edges must be >= 0");
  if (o.feature_dim < 0) return InvalidArgument("generate graph: --features must be >= 0");
  if (o.num_classes < 1 || o.num_classes > o.num_nodes) {
    return InvalidArgument("generate graph: --classes must be in [1, nodes]");
  }
  if (o.num_communities != 0 && (o.num_communities < o.num_classes || o.num_communities > o.num_nodes)) {
    return InvalidArgument("generate graph: --communities must be 0 (none) or in [classes, nodes] = [" +
                           std::to_string(o.num_classes) + ", " + std::to_string(o.num_nodes) + "], got " +
                           std::to_string(o.num_communities) + " (classes are communities mod classes)");
  }
  if (!(o.rmat_a >= 0 && o.rmat_b >= 0 && o.rmat_c >= 0 && o.rmat_a + o.rmat_b + o.rmat_c <= 1.0 + 1e-9)) {
    return InvalidArgument("generate graph: R-MAT a, b, c must be >= 0 with a + b + c <= 1");
  }
  if (!(o.p_in >= 0 && o.p_in <= 1)) return InvalidArgument("generate graph: --p-in must be in [0, 1]");
  if (!(o.feature_signal >= 0 && std::isfinite(o.feature_signal))) {
    return InvalidArgument("generate graph: --feature-signal must be finite and >= 0");
  }
  for (double f : {o.train_frac, o.val_frac, o.test_frac}) {
    if (!(f >= 0 && f <= 1)) return InvalidArgument("generate graph: split fractions must be in [0, 1]");
  }
  if (o.train_frac + o.val_frac + o.test_frac > 1.0 + 1e-9) {
    return InvalidArgument("generate graph: split fractions sum to more than 1");
  }
  if (o.feature_dtype != "f32" && o.feature_dtype != "f16") {
    return InvalidArgument("generate graph: --feature-dtype must be f32 or f16");
  }
  if (o.task != "node" && o.task != "link") {
    return InvalidArgument("generate graph: --task must be node or link, got '" + o.task + "'");
  }
  if (o.task == "link") FS_RETURN_IF_ERROR(internal::CheckEdgeSplit(o.edge_split));
  return Status::OK();
}

}  // namespace

Status GenerateGraph(const GenerateGraphOptions& o, const ExecContext& ctx, GenerateGraphReport* report) {
  FS_RETURN_IF_ERROR(Validate(o));
  ThreadPool* pool = ctx.pool ? ctx.pool : DefaultThreadPool();
  const RngKey root = RootKey(o.seed);
  Model m;
  m.o = &o;
  m.edges = root.Fold(kEdges);
  m.in_class = root.Fold(kInClass);
  m.features = root.Fold(kFeatures);
  m.means = root.Fold(kMeans);
  m.split = root.Fold(kSplit);
  m.perm_key = root.Fold(kPerm).key;
  m.class_perm_key = root.Fold(kClassPerm).key;
  m.community_key = root.Fold(kCommunity).key;
  m.scale = CeilLog2(o.num_nodes);
  m.pa = static_cast<float>(o.rmat_a);
  m.pab = static_cast<float>(o.rmat_a + o.rmat_b);
  m.pabc = static_cast<float>(o.rmat_a + o.rmat_b + o.rmat_c);
  m.col0 = static_cast<float>(o.rmat_a + o.rmat_c);
  const int64_t n = o.num_nodes;

  FS_ASSIGN_OR_RETURN(auto writer, storage::DatasetWriter::Create(o.output, o.overwrite));

  // Edges: blocks generated in parallel, fed to the external-memory builder.
  graph::CsrBuildOptions bo;
  bo.memory_budget_bytes = o.memory_budget_bytes;
  bo.temp_dir = o.temp_dir;
  bo.undirected = o.undirected;
  bo.keep_self_loops = o.keep_self_loops;
  bo.keep_duplicates = o.keep_multi_edges;
  bo.pool = pool;
  FS_ASSIGN_OR_RETURN(auto builder, graph::CsrBuilder::Create(bo));
  int64_t intra = 0;
  {
    const int64_t block = std::min(kEdgeBlock, std::max<int64_t>(o.num_edges, 1));
    std::vector<int64_t> src(static_cast<size_t>(block)), dst(static_cast<size_t>(block));
    // A billion edges take minutes to draw and sort into runs: progress
    // with rate and time left (the merge that follows has its own).
    ProgressOptions po;
    po.unit = "edges";
    Progress progress("generate edges", o.num_edges, po);
    for (int64_t base = 0; base < o.num_edges; base += block) {
      const int64_t count = std::min(block, o.num_edges - base);
      std::vector<int64_t> chunk_intra(static_cast<size_t>(ThreadPool::NumChunks(count, kEdgeChunk)), 0);
      pool->ParallelForChunks(count, kEdgeChunk, [&](int64_t k, int64_t b, int64_t e) {
        int64_t same = 0;
        for (int64_t i = b; i < e; ++i) same += GenerateEdge(m, base + i, &src[i], &dst[i]);
        chunk_intra[static_cast<size_t>(k)] = same;
      });
      for (int64_t c : chunk_intra) intra += c;
      FS_RETURN_IF_ERROR(builder->AddBatch(src.data(), dst.data(), count));
      progress.Advance(count);
    }
    progress.Finish(std::to_string(o.num_edges) + " edges drawn, " + std::to_string(builder->stats().num_runs) +
                    " runs spilled");
  }
  FS_RETURN_IF_ERROR(builder->Finish(n, writer->StagingPath(storage::kIndptrFile),
                                     writer->StagingPath(storage::kIndicesFile)));
  storage::LinkLayout link;
  int64_t graph_edges = builder->stats().num_edges;
  if (o.task == "link") {
    FS_RETURN_IF_ERROR(
        internal::SplitEdgesForLink(writer.get(), n, o.undirected, o.edge_split, o.seed, &link, &graph_edges));
  }

  // Features in row blocks.
  const int64_t f = o.feature_dim;
  const bool half = o.feature_dtype == "f16";
  {
    std::vector<float> means(static_cast<size_t>(o.num_classes * f));
    const float scale = f > 0 ? static_cast<float>(o.feature_signal / std::sqrt(static_cast<double>(f))) : 0.0f;
    for (int64_t c = 0; c < o.num_classes; ++c) {
      for (int64_t j = 0; j < f; j += 2) {
        const Uint4 b = m.means.Bits(static_cast<uint64_t>(c), static_cast<uint64_t>(j / 2));
        const float u1 = (static_cast<float>(b.x >> 8) + 1.0f) * (1.0f / 16777216.0f);
        const float u2 = static_cast<float>(b.y >> 8) * (1.0f / 16777216.0f);
        const float r = std::sqrt(-2.0f * std::log(u1));
        means[c * f + j] = scale * r * std::cos(6.28318530718f * u2);
        if (j + 1 < f) means[c * f + j + 1] = scale * r * std::sin(6.28318530718f * u2);
      }
    }
    FS_ASSIGN_OR_RETURN(auto out, writer->OpenArray(storage::kFeaturesFile, half ? DType::kF16 : DType::kF32, {f}));
    const int64_t rows = std::max<int64_t>(1, kFeatureBlockBytes / std::max<int64_t>(4, 4 * f));
    std::vector<float> block(static_cast<size_t>(std::min(rows, n) * f));
    std::vector<uint16_t> hblock(half ? block.size() : 0);
    for (int64_t base = 0; base < n; base += rows) {
      const int64_t count = std::min(rows, n - base);
      pool->ParallelFor(count, 1024, [&](int64_t b, int64_t e) {
        GenerateFeatures(m, means, base + b, base + e, block.data() + b * f);
        if (half) {
          for (int64_t i = b * f; i < e * f; ++i) hblock[i] = FloatToHalf(block[i]);
        }
      });
      FS_RETURN_IF_ERROR(out->Append(half ? static_cast<const void*>(hblock.data()) : block.data(), count));
    }
    FS_RETURN_IF_ERROR(out->Finish());
  }

  // Labels and splits, streamed in node order.
  int64_t split_counts[3] = {0, 0, 0};
  {
    FS_ASSIGN_OR_RETURN(auto labels, writer->OpenArray(storage::kLabelsFile, DType::kI32, {}));
    const char* files[3] = {storage::kTrainIdsFile, storage::kValIdsFile, storage::kTestIdsFile};
    std::unique_ptr<storage::NpyWriter> splits[3];
    for (int k = 0; k < 3; ++k) {
      FS_ASSIGN_OR_RETURN(splits[k], writer->OpenArray(files[k], DType::kI64, {}));
    }
    const float cut[3] = {static_cast<float>(o.train_frac), static_cast<float>(o.train_frac + o.val_frac),
                          static_cast<float>(o.train_frac + o.val_frac + o.test_frac)};
    constexpr int64_t kBlock = int64_t{1} << 16;
    std::vector<int32_t> lab;
    std::vector<int64_t> ids[3];
    for (int64_t base = 0; base < n; base += kBlock) {
      const int64_t end = std::min(n, base + kBlock);
      lab.clear();
      for (auto& v : ids) v.clear();
      for (int64_t v = base; v < end; ++v) {
        lab.push_back(static_cast<int32_t>(ClassOf(m, v)));
        const float u = m.split.Uniform(static_cast<uint64_t>(v), 0);
        for (int k = 0; k < 3; ++k) {
          if (u < cut[k]) {
            ids[k].push_back(v);
            break;
          }
        }
      }
      FS_RETURN_IF_ERROR(labels->Append(lab.data(), static_cast<int64_t>(lab.size())));
      for (int k = 0; k < 3; ++k) {
        FS_RETURN_IF_ERROR(splits[k]->Append(ids[k].data(), static_cast<int64_t>(ids[k].size())));
        split_counts[k] += static_cast<int64_t>(ids[k].size());
      }
    }
    FS_RETURN_IF_ERROR(labels->Finish());
    for (auto& s : splits) FS_RETURN_IF_ERROR(s->Finish());
  }

  const graph::CsrBuildStats& st = builder->stats();
  storage::DatasetManifest& man = writer->manifest();
  man.name = o.name;
  man.num_nodes = n;
  man.num_edges = graph_edges;
  if (o.task == "link") man.link = link.ToJson();
  man.feature_dim = f;
  man.feature_dtype = half ? DType::kF16 : DType::kF32;
  man.num_classes = o.num_classes;
  man.id_map = storage::IdMap::kNone;
  man.source = {
      {"tool", "foresight generate graph"},
      {"generator", o.num_communities > 0 ? "rmat-communities" : "rmat-planted"},
      {"params",
       {{"nodes", n}, {"edges", o.num_edges}, {"features", f}, {"classes", o.num_classes}, {"seed", o.seed},
        {"rmat_a", o.rmat_a}, {"rmat_b", o.rmat_b}, {"rmat_c", o.rmat_c}, {"p_in", o.p_in}, {"communities", o.num_communities},
        {"feature_signal", o.feature_signal}, {"train_frac", o.train_frac}, {"val_frac", o.val_frac},
        {"test_frac", o.test_frac}, {"keep_multi_edges", o.keep_multi_edges},
        {"keep_self_loops", o.keep_self_loops}, {"undirected", o.undirected}, {"feature_dtype", o.feature_dtype}}},
      {"counts",
       {{"edges", st.num_edges}, {"self_loops_dropped", st.self_loops_dropped},
        {"duplicates_dropped", st.duplicates_dropped}, {"train", split_counts[0]}, {"val", split_counts[1]},
        {"test", split_counts[2]}, {"intra_community_edges", intra}}}};
  if (o.task == "link") {
    man.source["params"]["task"] = o.task;
    man.source["params"]["edge_split"] = o.edge_split;
  }
  FS_RETURN_IF_ERROR(writer->Commit());
  if (report != nullptr) {
    report->num_nodes = n;
    report->num_edges = st.num_edges;
    report->self_loops_dropped = st.self_loops_dropped;
    report->duplicates_dropped = st.duplicates_dropped;
    report->num_train = split_counts[0];
    report->num_val = split_counts[1];
    report->num_test = split_counts[2];
    report->intra_community_edges = intra;
  }
  return Status::OK();
}

int64_t GeneratedCommunity(const GenerateGraphOptions& options, int64_t node) {
  return FeistelPermutation(options.num_nodes, RootKey(options.seed).Fold(kCommunity).key)(node) %
         std::max<int64_t>(options.num_communities, 1);
}

}  // namespace foresight::datasets
