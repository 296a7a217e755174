// Real datasets end to end: the bundled Cora (LINQS + Planetoid split) and
// SNAP email-Eu-core from ../shared/datasets (skipped when absent).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "foresight/datasets/preprocess.h"
#include "foresight/storage/dataset.h"
#include "testing/testing.h"

namespace foresight::datasets {
namespace {

using testing::Ints;

TEST(RealData, CoraWithPlanetoidSplit) {
  testing::TempDir dir;
  PreprocessOptions o;
  o.format = InputFormat::kLinqs;
  o.input = testing::SourceDir() + "/datasets/cora";
  o.output = dir.File("cora");
  o.undirected = true;
  o.normalize_features = FeatureNorm::kRow;
  o.split_file = o.input + "/cora.planetoid_split.tsv";
  PreprocessReport report;
  ASSERT_OK(Preprocess(o, CpuContext(), &report));
  ASSERT_OK_AND_ASSIGN(auto ds, storage::Dataset::Open(o.output));
  EXPECT_EQ(ds->num_nodes(), 2708);
  EXPECT_EQ(ds->num_edges(), 10556);
  EXPECT_EQ(ds->feature_dim(), 1433);
  EXPECT_EQ(ds->num_classes(), 7);
  EXPECT_EQ(report.dropped_missing, 0);
  EXPECT_EQ(ds->train_ids().numel(), 140);
  EXPECT_EQ(ds->val_ids().numel(), 500);
  EXPECT_EQ(ds->test_ids().numel(), 1000);
  EXPECT_EQ(ds->manifest().source["classes"][0], "Case_Based");
  EXPECT_EQ(ds->manifest().source["classes"][6], "Theory");

  // Planetoid: 20 training nodes per class.
  const auto labels = Ints(ds->labels());
  std::vector<int> per(7, 0);
  for (int64_t v : Ints(ds->train_ids())) per[labels[v]]++;
  EXPECT_EQ(per, std::vector<int>(7, 20));
  std::vector<int> sizes(7, 0);
  for (int64_t l : labels) sizes[l]++;
  EXPECT_EQ(sizes, (std::vector<int>{298, 418, 818, 426, 217, 180, 351}));

  // Row-normalised features sum to 1; the graph is symmetric.
  const float* f = ds->features().data<float>();
  for (int64_t v = 0; v < 2708; ++v) {
    double s = 0;
    for (int64_t j = 0; j < 1433; ++j) s += f[v * 1433 + j];
    ASSERT_NEAR(s, 1.0, 1e-5) << "row " << v;
  }
  const auto indptr = Ints(ds->indptr());
  const auto indices = Ints(ds->indices());
  for (int64_t v = 0; v < 2708; ++v) {
    for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) {
      const int64_t u = indices[k];
      ASSERT_TRUE(std::binary_search(indices.begin() + indptr[u], indices.begin() + indptr[u + 1], v));
    }
  }
  // Original paper ids: the first content line is paper 31336.
  ASSERT_TRUE(ds->original_ids().defined());
  const char* first = reinterpret_cast<const char*>(ds->original_ids().data<uint8_t>());
  EXPECT_EQ(std::string(first, strnlen(first, ds->original_ids().size(1))), "31336");
}

TEST(RealData, EmailEuCoreEdgeList) {
  const std::string root = testing::SharedDataset("email-Eu-core");
  if (root.empty()) GTEST_SKIP() << "../shared/datasets/email-Eu-core is absent";
  testing::TempDir dir;
  PreprocessOptions o;
  o.format = InputFormat::kEdgeList;
  o.edges = root + "/email-Eu-core.txt.xz";
  o.labels = root + "/email-Eu-core-department-labels.txt";
  o.output = dir.File("email");
  PreprocessReport report;
  ASSERT_OK(Preprocess(o, CpuContext(), &report));
  ASSERT_OK_AND_ASSIGN(auto ds, storage::Dataset::Open(o.output));
  EXPECT_EQ(ds->num_nodes(), 1005);
  EXPECT_EQ(report.input_edges, 25571);
  EXPECT_EQ(report.self_loops_dropped, 642);
  EXPECT_EQ(report.duplicates_dropped, 0);
  EXPECT_EQ(ds->num_edges(), 25571 - 642);
  EXPECT_EQ(ds->num_classes(), 42);

  o.output = dir.File("email_u");
  o.undirected = true;
  ASSERT_OK(Preprocess(o, CpuContext(), &report));
  EXPECT_EQ(report.num_edges, 2 * 16064);
}

}  // namespace
}  // namespace foresight::datasets
