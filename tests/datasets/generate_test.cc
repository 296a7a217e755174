// GenerateGraph: a valid dataset, bytes a function of the seed only (also
// across thread counts), and labels that depend on neighbourhoods.
#include "foresight/datasets/generate.h"

#include <filesystem>
#include <string>
#include <vector>

#include "foresight/storage/dataset.h"
#include "testing/testing.h"

namespace foresight::datasets {
namespace {

const char* kFiles[] = {"indptr.npy", "indices.npy", "features.npy", "labels.npy",
                        "train_ids.npy", "val_ids.npy", "test_ids.npy"};

GenerateGraphOptions Small(const std::string& out, uint64_t seed) {
  GenerateGraphOptions o;
  o.output = out;
  o.num_nodes = 3000;
  o.num_edges = 30000;
  o.feature_dim = 13;
  o.num_classes = 5;
  o.seed = seed;
  o.memory_budget_bytes = 64 << 10;  // forces spilled runs
  return o;
}

TEST(GenerateGraph, ValidDeterministicAndSeeded) {
  testing::TempDir dir;
  ThreadPool one(1), four(4);
  GenerateGraphReport report;
  ASSERT_OK(GenerateGraph(Small(dir.File("a"), 1), CpuContext(0, &one), &report));
  ASSERT_OK(GenerateGraph(Small(dir.File("b"), 1), CpuContext(0, &four)));
  ASSERT_OK(GenerateGraph(Small(dir.File("c"), 2), CpuContext(0, &four)));
  ASSERT_OK_AND_ASSIGN(auto ds, storage::Dataset::Open(dir.File("a")));
  EXPECT_EQ(ds->num_nodes(), 3000);
  EXPECT_EQ(ds->feature_dim(), 13);
  EXPECT_EQ(ds->num_classes(), 5);
  EXPECT_EQ(ds->num_edges(), 30000 - report.self_loops_dropped);
  EXPECT_EQ(report.duplicates_dropped, 0);  // multi-edges kept by default
  EXPECT_EQ(report.num_train + report.num_val + report.num_test, 3000);
  EXPECT_NEAR(report.num_train, 300, 90);
  for (const char* f : kFiles) {
    EXPECT_EQ(testing::ReadFile(dir.File("a") + "/" + f), testing::ReadFile(dir.File("b") + "/" + f)) << f;
  }
  for (const char* f : {"indices.npy", "features.npy", "train_ids.npy"}) {
    EXPECT_NE(testing::ReadFile(dir.File("a") + "/" + f), testing::ReadFile(dir.File("c") + "/" + f)) << f;
  }
}

TEST(GenerateGraph, NeighbourhoodsCarryTheClassAndDegreesAreSkewed) {
  testing::TempDir dir;
  GenerateGraphOptions o = Small(dir.File("g"), 5);
  o.keep_multi_edges = false;
  ASSERT_OK(GenerateGraph(o, CpuContext()));
  ASSERT_OK_AND_ASSIGN(auto ds, storage::Dataset::Open(o.output));
  const int64_t* indptr = ds->indptr().data<int64_t>();
  const int32_t* indices = ds->indices().data<int32_t>();
  const int32_t* labels = ds->labels().data<int32_t>();
  int64_t same = 0, max_deg = 0;
  for (int64_t v = 0; v < ds->num_nodes(); ++v) {
    max_deg = std::max(max_deg, indptr[v + 1] - indptr[v]);
    for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) same += labels[indices[k]] == labels[v];
  }
  // p_in = 0.7 plus 1/C of the rest: ~0.76 of in-edges stay in class.
  const double frac = static_cast<double>(same) / static_cast<double>(ds->num_edges());
  EXPECT_GT(frac, 0.65);
  EXPECT_LT(frac, 0.85);
  EXPECT_GT(max_deg, 10 * ds->num_edges() / ds->num_nodes());  // R-MAT hubs

  // Features: class means are visible in the averages.
  const float* x = ds->features().data<float>();
  std::vector<double> mean(5 * 13, 0.0);
  std::vector<int64_t> count(5, 0);
  double all = 0;
  for (int64_t v = 0; v < ds->num_nodes(); ++v) {
    count[labels[v]]++;
    for (int j = 0; j < 13; ++j) {
      mean[labels[v] * 13 + j] += x[v * 13 + j];
      all += x[v * 13 + j] * x[v * 13 + j];
    }
  }
  EXPECT_NEAR(all / (3000.0 * 13), 1.0 + 1.0 / 13, 0.1);  // unit noise + small mean
  double spread = 0;
  for (int c = 0; c < 5; ++c) {
    for (int j = 0; j < 13; ++j) spread += std::abs(mean[c * 13 + j] / count[c]);
  }
  EXPECT_GT(spread / (5 * 13), 0.1);
}

TEST(GenerateGraph, RejectsBadOptionsAndLeavesNothing) {
  testing::TempDir dir;
  GenerateGraphOptions o = Small(dir.File("bad"), 0);
  o.rmat_a = 0.9;
  EXPECT_ERROR_CONTAINS(GenerateGraph(o, CpuContext()), "a + b + c <= 1");
  o = Small(dir.File("bad"), 0);
  o.num_classes = 0;
  EXPECT_ERROR_CONTAINS(GenerateGraph(o, CpuContext()), "--classes");
  EXPECT_FALSE(std::filesystem::exists(dir.File("bad")));
}

TEST(GenerateGraph, HalfFeaturesAndUndirected) {
  testing::TempDir dir;
  GenerateGraphOptions o = Small(dir.File("h"), 9);
  o.feature_dtype = "f16";
  o.undirected = true;
  ASSERT_OK(GenerateGraph(o, CpuContext()));
  ASSERT_OK_AND_ASSIGN(auto ds, storage::Dataset::Open(o.output));
  EXPECT_EQ(ds->features().dtype(), DType::kF16);
}

// --communities: a planted partition. Edge count as asked, the fraction of
// edges inside a community near p_in + (1 - p_in) / K (counted from the
// files, and as the report says), classes = community mod C, communities
// scattered over the id range, the same bytes for the same seed.
TEST(GenerateGraph, CommunitiesArePlantedScatteredAndDeterministic) {
  testing::TempDir dir;
  GenerateGraphOptions o = Small(dir.File("k"), 3);
  o.num_communities = 40;
  o.p_in = 0.9;
  GenerateGraphReport report;
  ThreadPool one(1), four(4);
  ASSERT_OK(GenerateGraph(o, CpuContext(0, &four), &report));
  GenerateGraphOptions again = o;
  again.output = dir.File("k2");
  ASSERT_OK(GenerateGraph(again, CpuContext(0, &one)));
  for (const char* f : kFiles) {
    EXPECT_EQ(testing::ReadFile(o.output + "/" + f), testing::ReadFile(again.output + "/" + f)) << f;
  }
  ASSERT_OK_AND_ASSIGN(auto ds, storage::Dataset::Open(o.output));
  EXPECT_EQ(ds->num_edges(), o.num_edges - report.self_loops_dropped);
  const int64_t n = ds->num_nodes();
  std::vector<int64_t> community(static_cast<size_t>(n)), size(40, 0);
  for (int64_t v = 0; v < n; ++v) {
    community[v] = GeneratedCommunity(o, v);
    ASSERT_GE(community[v], 0);
    ASSERT_LT(community[v], 40);
    ++size[community[v]];
  }
  // Balanced (75 each) and scattered: a community's members span the ids.
  for (int64_t k = 0; k < 40; ++k) EXPECT_EQ(size[k], 75) << k;
  int64_t first_block_communities = 0;
  std::vector<bool> seen(40, false);
  for (int64_t v = 0; v < 75; ++v) first_block_communities += !seen[community[v]], seen[community[v]] = true;
  EXPECT_GT(first_block_communities, 20);  // ids 0..74 are not one community

  const int64_t* indptr = ds->indptr().data<int64_t>();
  const int32_t* indices = ds->indices().data<int32_t>();
  const int32_t* labels = ds->labels().data<int32_t>();
  int64_t intra = 0;
  for (int64_t v = 0; v < n; ++v) {
    EXPECT_EQ(labels[v], community[v] % 5) << v;
    for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) intra += community[indices[k]] == community[v];
  }
  const double expected = 0.9 + 0.1 / 40;
  EXPECT_NEAR(static_cast<double>(intra) / static_cast<double>(ds->num_edges()), expected, 0.02);
  EXPECT_NEAR(static_cast<double>(report.intra_community_edges) / static_cast<double>(o.num_edges), expected, 0.02);
  // The report counts drawn edges; the dropped self loops were inside too.
  EXPECT_EQ(report.intra_community_edges, intra + report.self_loops_dropped);

  // Another seed, another planting.
  GenerateGraphOptions other = o;
  other.seed = 4;
  int64_t moved = 0;
  for (int64_t v = 0; v < n; ++v) moved += GeneratedCommunity(other, v) != community[v];
  EXPECT_GT(moved, n / 2);
}

TEST(GenerateGraph, CommunitiesNeedAtLeastOnePerClass) {
  testing::TempDir dir;
  GenerateGraphOptions o = Small(dir.File("bad"), 0);
  o.num_communities = 3;  // < 5 classes
  EXPECT_ERROR_CONTAINS(GenerateGraph(o, CpuContext()), "--communities must be 0 (none) or in [classes, nodes]");
  EXPECT_FALSE(std::filesystem::exists(dir.File("bad")));
}

}  // namespace
}  // namespace foresight::datasets
