// Sparse feature inputs of `foresight preprocess`: the JSON object
// {"node": [feature ids]} (plain, .gz, .xz) and COO "node feature [value]"
// lines become the dataset's CSR feature arrays (no dense features.npy);
// --feature-dim; malformed input names the file, the line (and byte offset)
// and what was expected; a dataset without features is written with a
// warning that says what `train` needs.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "compress_util.h"
#include "foresight/core/thread_pool.h"
#include "foresight/datasets/preprocess.h"
#include "foresight/storage/dataset.h"
#include "testing/testing.h"

namespace foresight::datasets {
namespace {

using foresight::testing::TempDir;
using foresight::testing::VectorOf;
using foresight::testing::WriteFile;

class SparseFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(tmp_.File("edges.txt"), "0 1\n1 2\n2 3\n3 4\n");
    opt_.edges = tmp_.File("edges.txt");
    opt_.output = tmp_.File("ds");
  }
  Status Run(PreprocessReport* report = nullptr) {
    ThreadPool pool(2);
    return Preprocess(opt_, CpuContext(0, &pool), report);
  }
  std::unique_ptr<storage::Dataset> Open() {
    auto ds = storage::Dataset::Open(opt_.output);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? std::move(ds).value() : nullptr;
  }

  TempDir tmp_;
  PreprocessOptions opt_;
};

TEST_F(SparseFeaturesTest, JsonBecomesCsrRows) {
  // Node 2 is absent (an empty row); node 0 repeats feature 4 (summed); ids
  // within a row are stored sorted.
  WriteFile(tmp_.File("f.json"), "{\"0\": [4, 1, 4], \"1\": [],\n \"3\": [0], \"4\": [2, 7]}\n");
  opt_.features = tmp_.File("f.json");
  PreprocessReport report;
  ASSERT_OK(Run(&report));
  EXPECT_EQ(report.feature_dim, 8);
  auto ds = Open();
  ASSERT_NE(ds, nullptr);
  EXPECT_TRUE(ds->sparse_features());
  EXPECT_FALSE(ds->features().defined());
  EXPECT_EQ(ds->feature_dim(), 8);
  EXPECT_EQ(ds->manifest().arrays.count("features"), 0u);
  EXPECT_EQ(VectorOf<int64_t>(ds->feature_indptr()), (std::vector<int64_t>{0, 2, 2, 2, 3, 5}));
  EXPECT_EQ(VectorOf<int32_t>(ds->feature_indices()), (std::vector<int32_t>{1, 4, 0, 2, 7}));
  EXPECT_EQ(VectorOf<float>(ds->feature_values()), (std::vector<float>{1, 2, 1, 1, 1}));
  EXPECT_NE(testing::ReadFile(opt_.output + "/manifest.json").find("\"feature_layout\": \"sparse\""),
            std::string::npos);
}

TEST_F(SparseFeaturesTest, CompressedJsonByExtension) {
  const std::string json = "{\"0\": [3], \"4\": [1]}";
  for (const std::string& ext : {std::string(".json.gz"), std::string(".json.xz")}) {
    WriteFile(tmp_.File("f" + ext), ext == ".json.gz" ? datasets::testutil::Gzip(json) : datasets::testutil::Xz(json));
    opt_.features = tmp_.File("f" + ext);
    opt_.overwrite = true;
    ASSERT_OK(Run());
    auto ds = Open();
    ASSERT_NE(ds, nullptr);
    EXPECT_EQ(VectorOf<int32_t>(ds->feature_indices()), (std::vector<int32_t>{3, 1})) << ext;
  }
}

TEST_F(SparseFeaturesTest, CooWithValuesAndFeatureDim) {
  WriteFile(tmp_.File("f.coo"), "# node feature value\n0 2 0.5\n0 5 1.5\n3 1\n");
  opt_.sparse_features = tmp_.File("f.coo");
  opt_.feature_dim = 10;
  opt_.normalize_features = FeatureNorm::kRow;
  ASSERT_OK(Run());
  auto ds = Open();
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->feature_dim(), 10);
  EXPECT_EQ(VectorOf<int64_t>(ds->feature_indptr()), (std::vector<int64_t>{0, 2, 2, 2, 3, 3}));
  EXPECT_EQ(VectorOf<float>(ds->feature_values()), (std::vector<float>{0.25f, 0.75f, 1.0f}));
}

TEST_F(SparseFeaturesTest, LayoutDenseOrAutoWritesFeaturesNpy) {
  WriteFile(tmp_.File("f.json"), "{\"0\": [2, 0], \"2\": [1]}");
  opt_.features = tmp_.File("f.json");
  opt_.feature_layout = "dense";
  opt_.feature_dtype = "f16";
  ASSERT_OK(Run());
  auto ds = Open();
  ASSERT_NE(ds, nullptr);
  EXPECT_FALSE(ds->sparse_features());
  ASSERT_EQ(ds->features().shape(), (Shape{5, 3}));
  std::vector<float> dense;
  for (int64_t i = 0; i < 15; ++i) dense.push_back(HalfToFloat(static_cast<const uint16_t*>(ds->features().raw_data())[i]));
  EXPECT_EQ(dense, (std::vector<float>{1, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}));
  // auto: 5 x 3 floats (60 bytes) are more than the CSR arrays (48 + 24
  // bytes)? No: 60 < 72, so auto stores them dense too; with a wide
  // dimension it keeps them sparse.
  opt_.overwrite = true;
  opt_.feature_layout = "auto";
  opt_.feature_dtype = "f32";
  ASSERT_OK(Run());
  ds = Open();
  ASSERT_NE(ds, nullptr);
  EXPECT_FALSE(ds->sparse_features());
  opt_.feature_dim = 100;
  ASSERT_OK(Run());
  ds = Open();
  ASSERT_NE(ds, nullptr);
  EXPECT_TRUE(ds->sparse_features());
}

TEST_F(SparseFeaturesTest, StringIdsShareTheEdgeIds) {
  WriteFile(tmp_.File("edges.txt"), "a b\nb c\n");
  WriteFile(tmp_.File("f.json"), "{\"c\": [1], \"a\": [0], \"d\": [2]}");
  opt_.ids = IdKind::kString;
  opt_.features = tmp_.File("f.json");
  opt_.feature_layout = "sparse";  // auto would store 4 x 3 densely
  ASSERT_OK(Run());
  auto ds = Open();
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_nodes(), 4);  // a, b, c from the edges, then d
  EXPECT_EQ(VectorOf<int64_t>(ds->feature_indptr()), (std::vector<int64_t>{0, 1, 1, 2, 3}));
  EXPECT_EQ(VectorOf<int32_t>(ds->feature_indices()), (std::vector<int32_t>{0, 1, 2}));
}

TEST_F(SparseFeaturesTest, IntIdsBeyondTheEdgesAddNodes) {
  WriteFile(tmp_.File("f.json"), "{\"6\": [0]}");
  opt_.features = tmp_.File("f.json");
  ASSERT_OK(Run());
  auto ds = Open();
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_nodes(), 7);
}

TEST_F(SparseFeaturesTest, MalformedJsonNamesWhereAndWhat) {
  struct Case {
    std::string text;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"{\"0\": [1],\n \"1\": [2.5]}", {"f.json:2", "byte offset", "expected an integer feature id", "fractional"}},
      {"{\"0\": [1],\n \"1\": [2", {"f.json", "byte offset", "line 2", "unexpected end of input"}},
      {"[1, 2]", {"f.json:1", "expected a JSON object {\"node\": [feature ids], ...}, got an array"}},
      {"{\"0\": 3}", {"f.json:1", "feature ids go in a list"}},
      {"{\"0\": [\"x\"]}", {"f.json:1", "expected an integer feature id, got a string"}},
      {"{\"zero\": [1]}", {"f.json:1", "node id 'zero' is not an integer", "--ids string"}},
      {"{\"0\": [-1]}", {"f.json:1", "feature id -1 is out of range"}},
      {"{\"0\": [{\"1\": 2}]}", {"f.json:1", "expected an integer feature id, got an object"}},
  };
  for (const Case& c : cases) {
    WriteFile(tmp_.File("f.json"), c.text);
    opt_.features = tmp_.File("f.json");
    const Status s = Run();
    ASSERT_FALSE(s.ok()) << c.text;
    for (const std::string& part : c.expected) {
      EXPECT_NE(s.message().find(part), std::string::npos) << c.text << " -> " << s.message() << " lacks " << part;
    }
    EXPECT_FALSE(std::filesystem::exists(opt_.output)) << "a failed run left a dataset";
  }
}

TEST_F(SparseFeaturesTest, FeatureDimBoundsTheIds) {
  WriteFile(tmp_.File("f.json"), "{\"0\": [1],\n\"1\": [9]}");
  opt_.features = tmp_.File("f.json");
  opt_.feature_dim = 5;
  EXPECT_ERROR_CONTAINS(Run(), "f.json:2", "feature id 9 is out of range [0, 5)", "--feature-dim");
  WriteFile(tmp_.File("f.coo"), "0 1\n1 9\n");
  opt_.features.clear();
  opt_.sparse_features = tmp_.File("f.coo");
  EXPECT_ERROR_CONTAINS(Run(), "f.coo:2", "feature id 9 is out of range [0, 5)");
}

TEST_F(SparseFeaturesTest, MalformedCooNamesTheLine) {
  opt_.sparse_features = tmp_.File("f.coo");
  WriteFile(tmp_.File("f.coo"), "0 1\n1\n");
  EXPECT_ERROR_CONTAINS(Run(), "f.coo:2", "expected 'node feature' or 'node feature value', got 1 columns");
  WriteFile(tmp_.File("f.coo"), "0 1\n1 x\n");
  EXPECT_ERROR_CONTAINS(Run(), "f.coo:2", "feature id 'x' is not an integer");
  WriteFile(tmp_.File("f.coo"), "0 1 nan\n");
  EXPECT_ERROR_CONTAINS(Run(), "f.coo:1", "NaN feature in column 3");
  WriteFile(tmp_.File("labels.txt"), "0\n1\n0\n1\n0\n");  // per-row labels fix N = 5
  opt_.labels = tmp_.File("labels.txt");
  WriteFile(tmp_.File("f.coo"), "0 1\n7 1\n");
  EXPECT_ERROR_CONTAINS(Run(), "f.coo:2", "node id 7 is out of range [0, 5)");
}

TEST_F(SparseFeaturesTest, OptionCombinationsAreChecked) {
  WriteFile(tmp_.File("f.json"), "{\"0\": [1]}");
  opt_.features = tmp_.File("f.json");
  opt_.sparse_features = tmp_.File("f.json");
  EXPECT_ERROR_CONTAINS(Run(), "--features and --sparse-features are exclusive");
  opt_.sparse_features.clear();
  opt_.feature_dtype = "f16";
  EXPECT_ERROR_CONTAINS(Run(), "--feature-dtype f16 applies to dense features", "--feature-layout dense");
  opt_.feature_layout = "csr";
  EXPECT_ERROR_CONTAINS(Run(), "--feature-layout must be auto, sparse or dense, got 'csr'");
  opt_.feature_dtype = "f32";
  opt_.feature_layout = "auto";
  WriteFile(tmp_.File("f.txt"), "1 2\n3 4\n5 6\n7 8\n9 0\n");
  opt_.features = tmp_.File("f.txt");
  opt_.feature_dim = 3;
  EXPECT_ERROR_CONTAINS(Run(), "--feature-dim applies to sparse features");
  opt_.feature_dim = 0;
  opt_.feature_layout = "dense";
  EXPECT_ERROR_CONTAINS(Run(), "--feature-layout applies to sparse features");
}

TEST_F(SparseFeaturesTest, NoFeaturesWarnsWhatTrainNeeds) {
  PreprocessReport report;
  ASSERT_OK(Run(&report));
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("--node-features degree, one-hot or learned:DIM"), std::string::npos)
      << report.warnings[0];
  auto ds = Open();
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->feature_dim(), 0);
  EXPECT_FALSE(ds->sparse_features());
}

TEST_F(SparseFeaturesTest, DatasetOpenValidatesTheSparseArrays) {
  WriteFile(tmp_.File("f.json"), "{\"0\": [4, 1], \"3\": [0]}");
  opt_.features = tmp_.File("f.json");
  opt_.feature_dim = 5;
  opt_.feature_layout = "sparse";
  ASSERT_OK(Run());
  // A manifest claiming fewer features than the ids use.
  const std::string manifest = opt_.output + "/manifest.json";
  std::string m = testing::ReadFile(manifest);
  const size_t k = m.find("\"feature_dim\": 5");
  ASSERT_NE(k, std::string::npos);
  m.replace(k, 16, "\"feature_dim\": 3");
  WriteFile(manifest, m);
  EXPECT_ERROR_CONTAINS(storage::Dataset::Open(opt_.output), "feature_indices.npy", "feature id 4",
                        "feature_dim=3");
}

}  // namespace
}  // namespace foresight::datasets
