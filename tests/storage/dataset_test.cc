#include "foresight/storage/dataset.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <vector>

#include "testing/testing.h"

namespace foresight::storage {
namespace {

using nlohmann::json;
using testing::TempDir;

using testing::TensorOf;

// A 5-node graph, in-neighbour CSR: 0<-{1,2}, 1<-{0}, 2<-{}, 3<-{0,1,4}, 4<-{3}.
constexpr int64_t kN = 5, kE = 7, kF = 3, kC = 4;
const std::vector<int64_t> kIndptr = {0, 2, 3, 3, 6, 7};
const std::vector<int32_t> kIndices = {1, 2, 0, 0, 1, 4, 3};

Tensor Features() {
  Tensor t = Tensor::Empty({kN, kF}, DType::kF32);
  for (int64_t i = 0; i < kN * kF; ++i) t.data<float>()[i] = 0.1f * i;
  return t;
}

// Writes a valid dataset to `out`; string original ids when `string_ids`.
void WriteDataset(const std::string& out, bool overwrite = false, bool string_ids = true) {
  ASSERT_OK_AND_ASSIGN(auto w, DatasetWriter::Create(out, overwrite));
  DatasetManifest& m = w->manifest();
  m.name = "tiny";
  m.num_nodes = kN;
  m.num_edges = kE;
  m.feature_dim = kF;
  m.num_classes = kC;
  m.id_map = string_ids ? IdMap::kString : IdMap::kInt;
  m.source = {{"tool", "dataset_test"}, {"edges", "inline"}};
  ASSERT_OK(w->WriteArray(kIndptrFile, TensorOf(kIndptr)));
  ASSERT_OK(w->WriteArray(kIndicesFile, TensorOf(kIndices)));
  // Features streamed row by row through OpenArray.
  ASSERT_OK_AND_ASSIGN(auto fw, w->OpenArray(kFeaturesFile, DType::kF32, {kF}));
  Tensor f = Features();
  for (int64_t r = 0; r < kN; ++r) ASSERT_OK(fw->Append(f.data<float>() + r * kF, 1));
  ASSERT_OK(fw->Finish());
  ASSERT_OK(w->WriteArray(kLabelsFile, TensorOf<int64_t>({0, 3, -1, 2, 1})));
  ASSERT_OK(w->WriteArray(kTrainIdsFile, TensorOf<int64_t>({0, 1, 3})));
  ASSERT_OK(w->WriteArray(kValIdsFile, TensorOf<int64_t>({4})));
  ASSERT_OK(w->WriteArray(kTestIdsFile, TensorOf<int64_t>({})));
  if (string_ids) {
    Tensor ids = Tensor::Zeros({kN, 4}, DType::kU8);
    const char* names[] = {"n0", "n1", "node", "x", "n4"};
    for (int i = 0; i < kN; ++i) std::memcpy(ids.data<uint8_t>() + 4 * i, names[i], std::strlen(names[i]));
    ASSERT_OK(SaveNpyBytes(w->StagingPath(kOriginalIdsFile), ids));
  } else {
    ASSERT_OK(w->WriteArray(kOriginalIdsFile, TensorOf<int64_t>({100, 101, 102, 103, 104})));
  }
  ASSERT_OK(w->Commit());
}

json ReadJson(const std::string& path) { return json::parse(testing::ReadFile(path)); }
void WriteJson(const std::string& path, const json& j) { testing::WriteFile(path, j.dump(2)); }

class DatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = tmp_.File("ds");
    WriteDataset(out_);
  }
  std::string File(const std::string& f) const { return out_ + "/" + f; }
  void EditManifest(const std::function<void(json&)>& edit) {
    json j = ReadJson(File(kManifestFile));
    edit(j);
    WriteJson(File(kManifestFile), j);
  }
  TempDir tmp_;
  std::string out_;
};

TEST_F(DatasetTest, RoundTrip) {
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(out_));
  EXPECT_EQ(ds->num_nodes(), kN);
  EXPECT_EQ(ds->num_edges(), kE);
  EXPECT_EQ(ds->feature_dim(), kF);
  EXPECT_EQ(ds->num_classes(), kC);
  EXPECT_EQ(ds->dir(), out_);
  EXPECT_EQ(ds->manifest().name, "tiny");
  EXPECT_EQ(ds->manifest().id_map, IdMap::kString);
  EXPECT_EQ(ds->manifest().source["tool"], "dataset_test");
  EXPECT_TRUE(ds->manifest().partitions.is_null());
  ASSERT_EQ(ds->indptr().shape(), (Shape{kN + 1}));
  EXPECT_EQ(0, std::memcmp(ds->indptr().raw_data(), kIndptr.data(), 8 * kIndptr.size()));
  ASSERT_EQ(ds->indices().dtype(), DType::kI32);
  EXPECT_EQ(0, std::memcmp(ds->indices().raw_data(), kIndices.data(), 4 * kIndices.size()));
  ASSERT_EQ(ds->features().shape(), (Shape{kN, kF}));
  EXPECT_EQ(0, std::memcmp(ds->features().raw_data(), Features().raw_data(), 4 * kN * kF));
  EXPECT_EQ(ds->labels().data<int64_t>()[2], -1);
  EXPECT_EQ(ds->train_ids().numel(), 3);
  EXPECT_EQ(ds->val_ids().data<int64_t>()[0], 4);
  EXPECT_EQ(ds->test_ids().numel(), 0);
  ASSERT_EQ(ds->original_ids().shape(), (Shape{kN, 4}));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(ds->original_ids().data<uint8_t>()) + 8, 4), "node");
  // Manifest: every array listed with dtype and shape; no staging dirs left.
  const json j = ReadJson(File(kManifestFile));
  EXPECT_EQ(j["format"], "foresight-dataset");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["arrays"]["indices"]["dtype"], "i32");
  EXPECT_EQ(j["arrays"]["original_ids"]["dtype"], "S4");
  EXPECT_EQ(j["arrays"]["features"]["shape"], json::array({kN, kF}));
  EXPECT_EQ(j["arrays"]["test_ids"]["shape"], json::array({0}));
  EXPECT_EQ(j["arrays"].size(), 8u);
  for (const auto& e : std::filesystem::directory_iterator(tmp_.path())) {
    EXPECT_EQ(e.path().filename(), "ds") << "left behind: " << e.path();
  }
}

TEST_F(DatasetTest, IntOriginalIdsAndManifestJsonRoundTrip) {
  WriteDataset(out_, /*overwrite=*/true, /*string_ids=*/false);
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(out_));
  EXPECT_EQ(ds->manifest().id_map, IdMap::kInt);
  EXPECT_EQ(ds->original_ids().data<int64_t>()[4], 104);
  DatasetManifest back;
  ASSERT_OK(ParseManifest(ds->manifest().ToJson(), "x", &back));
  EXPECT_EQ(back.ToJson(), ds->manifest().ToJson());
  EXPECT_EQ(back.arrays.at("labels").shape, (Shape{kN}));
}

// "class_names" is optional; when present it names every class, and it
// survives the manifest round trip.
TEST_F(DatasetTest, ClassNames) {
  EditManifest([](json& j) { j["class_names"] = {"a", "b", "c", "d"}; });
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(out_));
  EXPECT_EQ(ds->manifest().class_names, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(ds->manifest().ToJson()["class_names"], json({"a", "b", "c", "d"}));
  EditManifest([](json& j) { j["class_names"] = {"a", "b"}; });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), "\"class_names\"", "num_classes = 4 strings");
  EditManifest([](json& j) { j["class_names"] = {"a", "b", "c", 4}; });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), "\"class_names\"", "must hold strings, got 4");
}

TEST_F(DatasetTest, MissingManifest) {
  ASSERT_EQ(0, ::unlink(File(kManifestFile).c_str()));
  auto s = Dataset::Open(out_).status();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_ERROR_CONTAINS(s, File(kManifestFile));
  EXPECT_EQ(Dataset::Open(tmp_.File("nowhere")).status().code(), StatusCode::kNotFound);
}

TEST_F(DatasetTest, ManifestNotJsonOrWrongFormatOrVersion) {
  const std::string good = testing::ReadFile(File(kManifestFile));
  testing::WriteFile(File(kManifestFile), "{\"format\": \"foresight-dataset\", ");
  auto s = Dataset::Open(out_).status();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_ERROR_CONTAINS(s, File(kManifestFile), "not valid JSON");
  testing::WriteFile(File(kManifestFile), good);
  EditManifest([](json& j) { j["version"] = 2; });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), "version 2 is not supported");
  EditManifest([](json& j) { j["version"] = 1; j["format"] = "something-else"; });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), "not a foresight dataset");
  EditManifest([](json& j) { j["format"] = "foresight-dataset"; j["num_nodes"] = "five"; });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), "\"num_nodes\"", "integer");
  EditManifest([](json& j) { j["num_nodes"] = kN; j["arrays"]["labels"]["file"] = "../labels.npy"; });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), "arrays.labels.file", "plain file name");
}

// nlohmann::json checks UTF-8 itself while parsing strings (no read past
// the text, unlike toml11): invalid bytes anywhere are a clear DataLoss
// naming the manifest and the position.
TEST_F(DatasetTest, ManifestWithInvalidUtf8) {
  const std::string good = testing::ReadFile(File(kManifestFile));
  const size_t name_at = good.find("\"name\"");
  ASSERT_NE(name_at, std::string::npos);
  for (const std::string bad : {"\"caf\xE9\"", "\"\xED\xA0\x80\"", "\"\xC0\xAF\"", "\"\xE5"}) {
    testing::WriteFile(File(kManifestFile), good.substr(0, name_at) + "\"name\": " + bad + ",\n" +
                                                good.substr(name_at));
    auto s = Dataset::Open(out_).status();
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
    EXPECT_ERROR_CONTAINS(s, File(kManifestFile), "not valid JSON", "ill-formed UTF-8");
  }
}

TEST_F(DatasetTest, MissingArrayFile) {
  ASSERT_EQ(0, ::unlink(File(kLabelsFile).c_str()));
  auto s = Dataset::Open(out_).status();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_ERROR_CONTAINS(s, File(kLabelsFile), "labels");
  EditManifest([](json& j) { j["arrays"].erase("labels"); });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), "no entry \"labels\"");
}

TEST_F(DatasetTest, ManifestDTypeDisagreesWithFile) {
  EditManifest([](json& j) { j["arrays"]["labels"]["dtype"] = "i32"; });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), File(kLabelsFile), "dtype is i64", "says i32");
}

TEST_F(DatasetTest, ManifestShapeDisagreesWithFile) {
  EditManifest([](json& j) { j["arrays"]["indices"]["shape"] = {8}; });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), File(kIndicesFile), "shape is [7]", "says [8]");
}

TEST_F(DatasetTest, ArraysDisagreeWithCounts) {
  EditManifest([](json& j) { j["num_nodes"] = 6; });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), File(kIndptrFile), "expected shape [7]", "got [6]");
  EditManifest([](json& j) { j["num_nodes"] = kN; j["feature_dim"] = 4; });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), File(kFeaturesFile), "expected shape [5, 4]");
  EditManifest([](json& j) { j["feature_dim"] = kF; j["feature_dtype"] = "f16"; });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), File(kFeaturesFile), "dtype must be f16, got f32");
}

TEST_F(DatasetTest, IndptrNotMonotoneNamesTheRow) {
  ASSERT_OK(SaveNpy(File(kIndptrFile), TensorOf<int64_t>({0, 2, 3, 1, 6, 7})));
  auto s = Dataset::Open(out_).status();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_ERROR_CONTAINS(s, File(kIndptrFile), "non-decreasing", "row 2", "indptr[2]=3 > indptr[3]=1");
  ASSERT_OK(SaveNpy(File(kIndptrFile), TensorOf<int64_t>({0, 2, 3, 3, 6, 6})));
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), "indptr[5]", "num_edges=7", "got 6");
  ASSERT_OK(SaveNpy(File(kIndptrFile), TensorOf<int64_t>({1, 2, 3, 3, 6, 7})));
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), "indptr[0] must be 0");
}

TEST_F(DatasetTest, IndexOutOfRangeNamesPositionAndValue) {
  ASSERT_OK(SaveNpy(File(kIndicesFile), TensorOf<int32_t>({1, 2, 0, 5, 1, -1, 3})));
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), File(kIndicesFile), "position 3: value 5", "[0, 5)");
}

TEST_F(DatasetTest, FirstBadIndexAcrossParallelChunks) {
  // Enough edges for several scan chunks; the earliest bad position wins.
  const int64_t e = 700000;
  std::vector<int64_t> indices(e, 1);
  indices[650000] = 9;
  indices[300001] = -4;
  indices[600000] = 7;
  std::vector<int64_t> indptr = {0, e, e, e, e, e};
  ASSERT_OK(SaveNpy(File(kIndicesFile), TensorOf(indices)));
  ASSERT_OK(SaveNpy(File(kIndptrFile), TensorOf(indptr)));
  EditManifest([&](json& j) {
    j["num_edges"] = e;
    j["arrays"]["indices"] = {{"file", kIndicesFile}, {"dtype", "i64"}, {"shape", {e}}};
  });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), "position 300001: value -4");
  indices[300001] = 0;
  indices[600000] = 0;
  indices[650000] = 0;
  ASSERT_OK(SaveNpy(File(kIndicesFile), TensorOf(indices)));
  EXPECT_OK(Dataset::Open(out_).status());
}

TEST_F(DatasetTest, LabelOutOfRange) {
  ASSERT_OK(SaveNpy(File(kLabelsFile), TensorOf<int64_t>({0, 3, -1, 4, 1})));
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), File(kLabelsFile), "row 3: label 4", "[-1, num_classes=4)");
  ASSERT_OK(SaveNpy(File(kLabelsFile), TensorOf<int64_t>({0, -2, -1, 0, 1})));
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), "row 1: label -2");
}

TEST_F(DatasetTest, SplitIdsOutOfRangeUnlessNotValidated) {
  ASSERT_OK(SaveNpy(File(kValIdsFile), TensorOf<int64_t>({4, 5})));
  EditManifest([](json& j) { j["arrays"]["val_ids"]["shape"] = {2}; });
  EXPECT_ERROR_CONTAINS(Dataset::Open(out_), File(kValIdsFile), "position 1: node id 5");
  EXPECT_OK(Dataset::Open(out_, /*validate_ids=*/false).status());
}

TEST_F(DatasetTest, TruncatedArrayIsDataLoss) {
  ASSERT_EQ(0, ::truncate(File(kFeaturesFile).c_str(), 4096 + 10));
  auto s = Dataset::Open(out_).status();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_ERROR_CONTAINS(s, File(kFeaturesFile), "truncated");
}

TEST_F(DatasetTest, UnreadableArray) {
  ASSERT_EQ(0, ::chmod(File(kIndicesFile).c_str(), 0));
  // Root ignores file modes: the body runs as nobody when the test is root.
  testing::RunUnprivileged({tmp_.path()}, [&] {
    EXPECT_ERROR_CONTAINS(Dataset::Open(out_), File(kIndicesFile), "Permission denied");
  });
}

TEST(DatasetWriter, WithoutCommitLeavesNothing) {
  TempDir tmp;
  {
    ASSERT_OK_AND_ASSIGN(auto w, DatasetWriter::Create(tmp.File("out"), false));
    ASSERT_OK(w->WriteArray(kIndptrFile, TensorOf<int64_t>({0})));
    EXPECT_TRUE(std::filesystem::exists(w->StagingPath(kIndptrFile)));
    EXPECT_NE(w->staging_dir().find("out.tmp-"), std::string::npos);
  }
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

TEST(DatasetWriter, CommitRefusesAnInvalidDataset) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto w, DatasetWriter::Create(tmp.File("out"), false));
  w->manifest().num_nodes = 2;
  ASSERT_OK(w->WriteArray(kIndptrFile, TensorOf<int64_t>({0, 0, 0})));
  EXPECT_ERROR_CONTAINS(w->Commit(), "not committed", "no entry \"indices\"");
  w.reset();
  EXPECT_TRUE(std::filesystem::is_empty(tmp.path()));
}

TEST(DatasetWriter, ExistingOutputDir) {
  TempDir tmp;
  const std::string out = tmp.File("ds");
  WriteDataset(out);
  EXPECT_EQ(DatasetWriter::Create(out, false).status().code(), StatusCode::kAlreadyExists);
  // Overwrite replaces a dataset, leaving no old copy behind.
  WriteDataset(out, /*overwrite=*/true, /*string_ids=*/false);
  ASSERT_OK_AND_ASSIGN(auto ds, Dataset::Open(out));
  EXPECT_EQ(ds->manifest().id_map, IdMap::kInt);
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path())) {
    EXPECT_EQ(e.path().filename(), "ds");
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  // A directory that is not a dataset is never overwritten.
  const std::string other = tmp.File("home");
  std::filesystem::create_directory(other);
  testing::WriteFile(other + "/thesis.tex", "precious");
  auto s = DatasetWriter::Create(other, true).status();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_ERROR_CONTAINS(s, "refusing to overwrite", other, "not a foresight dataset");
  testing::WriteFile(tmp.File("file"), "x");
  EXPECT_ERROR_CONTAINS(DatasetWriter::Create(tmp.File("file"), true), "refusing to overwrite");
  EXPECT_EQ(testing::ReadFile(other + "/thesis.tex"), "precious");
  // A dataset whose manifest is damaged but still says it is ours can be
  // replaced; one whose manifest is not JSON cannot.
  json j = ReadJson(out + "/" + kManifestFile);
  j["version"] = 99;
  j.erase("arrays");
  WriteJson(out + "/" + kManifestFile, j);
  WriteDataset(out, /*overwrite=*/true);
  EXPECT_OK(Dataset::Open(out).status());
  testing::WriteFile(out + "/" + kManifestFile, "garbage");
  EXPECT_ERROR_CONTAINS(DatasetWriter::Create(out, true), "refusing to overwrite");
}

TEST(DatasetWriter, RejectsPathLikeFileNames) {
  TempDir tmp;
  ASSERT_OK_AND_ASSIGN(auto w, DatasetWriter::Create(tmp.File("out"), false));
  EXPECT_ERROR_CONTAINS(w->WriteArray("../x.npy", TensorOf<int64_t>({0})), "plain name");
  EXPECT_ERROR_CONTAINS(w->OpenArray(kManifestFile, DType::kF32, {}), "plain name");
}

}  // namespace
}  // namespace foresight::storage
