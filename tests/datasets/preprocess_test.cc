// Preprocess on small hand-written inputs: every format, compressed inputs,
// string ids, binary edges, and one malformed-input test per error case
// (file, line and reason in the message; no output dir left behind).
#include "foresight/datasets/preprocess.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "compress_util.h"
#include "foresight/storage/dataset.h"
#include "testing/testing.h"

namespace foresight::datasets {
namespace {

namespace fs = std::filesystem;
using testing::WriteFile;

std::vector<int64_t> Ints(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    v[i] = t.dtype() == DType::kI32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  }
  return v;
}

std::vector<std::string> Strings(const Tensor& t) {
  std::vector<std::string> v;
  const int64_t w = t.size(1);
  for (int64_t i = 0; i < t.size(0); ++i) {
    const char* p = reinterpret_cast<const char*>(t.data<uint8_t>() + i * w);
    v.emplace_back(p, strnlen(p, static_cast<size_t>(w)));
  }
  return v;
}

class PreprocessTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return dir_.File(name); }
  std::string Write(const std::string& name, const std::string& text) {
    fs::create_directories(fs::path(Path(name)).parent_path());
    WriteFile(Path(name), text);
    return Path(name);
  }
  PreprocessOptions Options(InputFormat format) {
    PreprocessOptions o;
    o.format = format;
    o.output = Path("out");
    o.temp_dir = dir_.path();
    return o;
  }
  std::unique_ptr<storage::Dataset> Run(const PreprocessOptions& o, PreprocessReport* report = nullptr) {
    Status s = Preprocess(o, CpuContext(), report);
    EXPECT_TRUE(s.ok()) << s.ToString();
    auto ds = storage::Dataset::Open(o.output);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? std::move(ds).value() : nullptr;
  }
  // The run must fail with every part in the message and leave nothing.
  void ExpectFails(const PreprocessOptions& o, std::initializer_list<std::string> parts) {
    const Status s = Preprocess(o, CpuContext());
    testing::ExpectErrorContains(s, "Preprocess", parts);
    EXPECT_FALSE(fs::exists(o.output)) << o.output << " exists after a failed run";
    for (const auto& e : fs::directory_iterator(fs::path(o.output).parent_path())) {
      EXPECT_EQ(e.path().filename().string().find("out.tmp"), std::string::npos) << "staging left: " << e.path();
    }
  }

  // A tiny LINQS folder: 3 papers, 3 features, classes B and A.
  std::string Linqs(const std::string& content, const std::string& cites) {
    Write("linqs/x.content", content);
    Write("linqs/x.cites", cites);
    return Path("linqs");
  }
  static constexpr const char* kContent = "p1\t1\t0\t1\tB\np2\t0\t0\t0\tA\np3\t0\t2\t2\tB\n";

  testing::TempDir dir_;
};

TEST_F(PreprocessTest, LinqsRelabelsNormalisesAndSymmetrises) {
  PreprocessOptions o = Options(InputFormat::kLinqs);
  o.input = Linqs(kContent, "p1\tp2\np3\tp1\n");  // p2 -> p1, p1 -> p3
  o.undirected = true;
  o.normalize_features = FeatureNorm::kRow;
  Write("split.tsv", "#id\tsplit\np1\ttrain\textra\np2\tval\np3\ttest\n");
  o.split_file = Path("split.tsv");
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_nodes(), 3);
  EXPECT_EQ(ds->num_edges(), 4);
  EXPECT_EQ(Ints(ds->indptr()), (std::vector<int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(Ints(ds->indices()), (std::vector<int64_t>{1, 2, 0, 0}));
  EXPECT_EQ(Ints(ds->labels()), (std::vector<int64_t>{1, 0, 1}));  // A=0, B=1 (sorted names)
  EXPECT_EQ(ds->num_classes(), 2);
  EXPECT_EQ(ds->manifest().source["classes"], nlohmann::json({"A", "B"}));
  EXPECT_EQ(Strings(ds->original_ids()), (std::vector<std::string>{"p1", "p2", "p3"}));
  const float* f = ds->features().data<float>();
  EXPECT_FLOAT_EQ(f[0], 0.5f);
  EXPECT_FLOAT_EQ(f[2], 0.5f);
  EXPECT_FLOAT_EQ(f[3], 0.0f);  // an all-zero row stays zero
  EXPECT_FLOAT_EQ(f[4], 0.0f);
  EXPECT_FLOAT_EQ(f[7], 0.5f);
  EXPECT_EQ(Ints(ds->train_ids()), (std::vector<int64_t>{0}));
  EXPECT_EQ(Ints(ds->val_ids()), (std::vector<int64_t>{1}));
  EXPECT_EQ(Ints(ds->test_ids()), (std::vector<int64_t>{2}));
}

TEST_F(PreprocessTest, LinqsDropsCitesOfMissingPapersWithOneWarning) {
  PreprocessOptions o = Options(InputFormat::kLinqs);
  o.input = Linqs(kContent, "p1\tp2\nzz\tp1\np3\tyy\nzz\tqq\n");
  PreprocessReport report;
  auto ds = Run(o, &report);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(report.dropped_missing, 3);
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_NE(report.warnings[0].find("dropped 3 edges citing papers missing from x.content"), std::string::npos)
      << report.warnings[0];
  EXPECT_EQ(ds->num_edges(), 1);
  EXPECT_EQ(ds->manifest().source["dropped_edges"]["missing_nodes"], 3);
}

TEST_F(PreprocessTest, LinqsWrongColumnCount) {
  PreprocessOptions o = Options(InputFormat::kLinqs);
  o.input = Linqs("p1\t1\t0\t1\tB\np2\t0\tA\n", "");
  ExpectFails(o, {"x.content:2: expected 5 columns, got 3"});
}

TEST_F(PreprocessTest, LinqsDuplicatePaper) {
  PreprocessOptions o = Options(InputFormat::kLinqs);
  o.input = Linqs("p1\t1\t0\t1\tB\np2\t0\t0\t0\tA\np1\t0\t2\t2\tB\n", "");
  ExpectFails(o, {"x.content:3: duplicate paper id 'p1' (first on line 1)"});
}

TEST_F(PreprocessTest, LinqsNaNFeature) {
  PreprocessOptions o = Options(InputFormat::kLinqs);
  o.input = Linqs("p1\t1\t0\t1\tB\np2\t0\tnan\t0\tA\n", "");
  ExpectFails(o, {"x.content:2: NaN feature in column 3"});
}

TEST_F(PreprocessTest, LinqsBadFeature) {
  PreprocessOptions o = Options(InputFormat::kLinqs);
  o.input = Linqs("p1\t1\t0\t1\tB\np2\t0\t1x\t0\tA\n", "");
  ExpectFails(o, {"x.content:2: feature in column 3 is not a number: '1x'"});
}

TEST_F(PreprocessTest, LinqsCitesWrongColumnCount) {
  PreprocessOptions o = Options(InputFormat::kLinqs);
  o.input = Linqs(kContent, "p1\tp2\np1\tp2\tp3\n");
  ExpectFails(o, {"x.cites:2: expected 2 columns, got 3"});
}

TEST_F(PreprocessTest, LinqsNeedsExactlyOneContentFile) {
  PreprocessOptions o = Options(InputFormat::kLinqs);
  o.input = Linqs(kContent, "");
  Write("linqs/y.content.xz", testutil::Xz(kContent));
  ExpectFails(o, {"expected exactly one *.content file in", "found 2 (x.content, y.content.xz)"});
}

TEST_F(PreprocessTest, LinqsTruncatedXz) {
  PreprocessOptions o = Options(InputFormat::kLinqs);
  std::string big;
  for (int i = 0; i < 3000; ++i) big += "p" + std::to_string(i) + "\t1\t0\t" + std::to_string(i) + "\tB\n";
  const std::string xz = testutil::Xz(big);
  Write("linqs/x.content.xz", xz.substr(0, xz.size() - 20));
  Write("linqs/x.cites", "");
  o.input = Path("linqs");
  ExpectFails(o, {"x.content.xz: truncated (unexpected end of xz stream)"});
}

TEST_F(PreprocessTest, SplitFileUnknownIdAndBadName) {
  PreprocessOptions o = Options(InputFormat::kLinqs);
  o.input = Linqs(kContent, "p1\tp2\n");
  o.split_file = Write("split.tsv", "p1\ttrain\nzz\ttest\n");
  ExpectFails(o, {"split.tsv:2: unknown node id 'zz'"});
  o.split_file = Write("split2.tsv", "# header\np1\ttraining\n");
  ExpectFails(o, {"split2.tsv:2: bad split name 'training' (expected train, val or test)"});
  o.split_file = Write("split3.tsv", "p1\ttrain\np1\ttest\n");
  ExpectFails(o, {"split3.tsv:2: node 'p1' is already in train"});
}

TEST_F(PreprocessTest, EdgeListIntIdsKeepIsolatedNodesAndDropLoopsAndDuplicates) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("e.txt", "# comment\n% another\n0 1\n1\t2\n\n1 2\n3 3\n2 \t0\n");
  o.labels = Write("labels.txt", "0\n1\n-1\n1\n0\n1\n");  // 6 nodes, node 5 isolated
  PreprocessReport report;
  auto ds = Run(o, &report);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_nodes(), 6);
  EXPECT_EQ(Ints(ds->indptr()), (std::vector<int64_t>{0, 1, 2, 3, 3, 3, 3}));
  EXPECT_EQ(Ints(ds->indices()), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(report.self_loops_dropped, 1);
  EXPECT_EQ(report.duplicates_dropped, 1);
  EXPECT_EQ(ds->feature_dim(), 0);
  EXPECT_EQ(ds->num_classes(), 2);
  EXPECT_FALSE(ds->original_ids().defined());
  // Random split over the 5 labelled nodes: 0.1/0.1/0.8 -> 1/1/4 rounded.
  EXPECT_EQ(ds->train_ids().numel() + ds->val_ids().numel() + ds->test_ids().numel(), 5);
  for (int64_t v : Ints(ds->test_ids())) EXPECT_NE(v, 2);  // unlabelled node never split
}

TEST_F(PreprocessTest, EdgeListCompressedInputsMatchPlain) {
  const std::string text = "0\t1\n1\t2\n2\t0\n4\t0\n";
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("e.txt", text);
  auto plain = Run(o);
  ASSERT_NE(plain, nullptr);
  for (const char* name : {"e.gz", "e.xz"}) {
    PreprocessOptions c = o;
    c.output = Path(std::string("out_") + name);
    c.edges = Write(name, name[2] == 'g' ? testutil::Gzip(text) : testutil::Xz(text));
    auto ds = Run(c);
    ASSERT_NE(ds, nullptr);
    EXPECT_EQ(Ints(ds->indptr()), Ints(plain->indptr())) << name;
    EXPECT_EQ(Ints(ds->indices()), Ints(plain->indices())) << name;
    EXPECT_EQ(ds->manifest().source["inputs"]["edges"], c.edges);
  }
}

TEST_F(PreprocessTest, EdgeListBinaryEdgesMatchText) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("e.txt", "0 1\n3 2\n2 0\n1 3\n");
  auto text = Run(o);
  ASSERT_NE(text, nullptr);
  const int32_t e32[] = {0, 1, 3, 2, 2, 0, 1, 3};
  const int64_t e64[] = {0, 1, 3, 2, 2, 0, 1, 3};
  for (int wide = 0; wide < 2; ++wide) {
    PreprocessOptions b = o;
    b.output = Path("out" + std::to_string(wide));
    b.edge_dtype = wide ? EdgeDType::kInt64 : EdgeDType::kInt32;
    b.edges = Write("e" + std::to_string(wide) + ".bin",
                    wide ? std::string(reinterpret_cast<const char*>(e64), sizeof(e64))
                         : std::string(reinterpret_cast<const char*>(e32), sizeof(e32)));
    auto ds = Run(b);
    ASSERT_NE(ds, nullptr);
    EXPECT_EQ(Ints(ds->indptr()), Ints(text->indptr()));
    EXPECT_EQ(Ints(ds->indices()), Ints(text->indices()));
  }
}

TEST_F(PreprocessTest, EdgeListBinarySizeNotAMultiple) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edge_dtype = EdgeDType::kInt32;
  o.edges = Write("edges.bin", std::string(20, '\0'));
  ExpectFails(o, {"edges.bin: file size 20 bytes is not a multiple of 8 (int32 src, dst pairs)"});
  o.edge_dtype = EdgeDType::kInt64;
  o.edges = Write("edges.bin.xz", testutil::Xz(std::string(24, '\0')));
  ExpectFails(o, {"edges.bin.xz: data size 24 bytes is not a multiple of 16 (int64 src, dst pairs)"});
}

TEST_F(PreprocessTest, EdgeListBinaryIdOutOfRange) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edge_dtype = EdgeDType::kInt32;
  const int32_t e[] = {0, 1, 7, 2};
  o.edges = Write("edges.bin", std::string(reinterpret_cast<const char*>(e), sizeof(e)));
  o.labels = Write("labels.txt", "0\n1\n0\n1\n0\n");
  ExpectFails(o, {"edges.bin: edge 1 (byte offset 8): id 7 out of range [0, 5)"});
}

TEST_F(PreprocessTest, EdgeListWrongColumnCount) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("edges.txt", "0 1\n1 2\n1 2 3\n");
  ExpectFails(o, {"edges.txt:3: expected 2 columns, got 3"});
}

TEST_F(PreprocessTest, EdgeListIdOutOfRangeOfFeatures) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  std::string feats;
  for (int i = 0; i < 50; ++i) feats += "1,2\n";
  o.features = Write("feat.csv", feats);
  o.edges = Write("edges.txt", "0 1\n99 2\n");
  ExpectFails(o, {"edges.txt:2: id 99 out of range [0, 50)"});
}

TEST_F(PreprocessTest, EdgeListNonIntegerAndNegativeIds) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("edges.txt", "0 1\na 2\n");
  ExpectFails(o, {"edges.txt:2: node id 'a' is not an integer"});
  o.edges = Write("edges2.txt", "0 -1\n");
  ExpectFails(o, {"edges2.txt:1: id -1 out of range"});
}

TEST_F(PreprocessTest, EdgeListTruncatedGzip) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i) + " " + std::to_string(i + 1) + "\n";
  const std::string gz = testutil::Gzip(text);
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("edges.txt.gz", gz.substr(0, gz.size() / 2));
  ExpectFails(o, {"edges.txt.gz: truncated (unexpected end of gzip stream)"});
}

TEST_F(PreprocessTest, FeaturesCsvErrors) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("edges.txt", "0 1\n");
  o.features = Write("feat.csv", "1,2,3\n4,NaN,6\n");
  ExpectFails(o, {"feat.csv:2: NaN feature in column 2"});
  o.features = Write("feat2.csv", "1,2,3\n4,5,6\n7,8\n");
  ExpectFails(o, {"feat2.csv:3: expected 3 columns, got 2"});
  o.features = Write("feat3.csv", "1,2,3\n4,inf,6\n");
  ExpectFails(o, {"feat3.csv:2: infinite feature in column 2"});
}

TEST_F(PreprocessTest, FeaturesNpyNormalisedAndF16) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("edges.txt", "0 1\n1 2\n");
  Tensor t = Tensor::Empty({3, 2}, DType::kF32);
  const float vals[] = {1, 3, 0, 0, 2, 2};
  std::memcpy(t.raw_data(), vals, sizeof(vals));
  ASSERT_OK(storage::SaveNpy(Path("feat.npy"), t));
  o.features = Path("feat.npy");
  o.normalize_features = FeatureNorm::kRow;
  o.feature_dtype = "f16";
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->features().dtype(), DType::kF16);
  const uint16_t* h = reinterpret_cast<const uint16_t*>(ds->features().raw_data());
  const float expect[] = {0.25f, 0.75f, 0, 0, 0.5f, 0.5f};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(HalfToFloat(h[i]), expect[i]) << i;

  float nan = std::nanf("");
  std::memcpy(static_cast<float*>(t.raw_data()) + 3, &nan, sizeof(float));
  ASSERT_OK(storage::SaveNpy(Path("bad.npy"), t));
  o.features = Path("bad.npy");
  o.output = Path("out2");
  ExpectFails(o, {"bad.npy: row 1: NaN feature in column 1"});
}

TEST_F(PreprocessTest, LabelErrors) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("edges.txt", "0 1\n");
  o.labels = Write("labels.txt", "0\nx\n");
  ExpectFails(o, {"labels.txt:2: label 'x' is not an integer >= -1"});
  o.labels = Write("labels2.txt", "0 1\n1 2 3\n");
  ExpectFails(o, {"labels2.txt:2: expected 2 columns, got 3"});
  o.features = Write("f.csv", "1\n2\n3\n");
  o.labels = Write("labels3.txt", "0\n1\n");
  ExpectFails(o, {"labels3.txt: 2 labels, but f.csv has 3 rows"});
  o.labels = Write("labels4.txt", "0 1\n7 1\n");
  ExpectFails(o, {"labels4.txt:2: id 7 out of range [0, 3)"});
}

TEST_F(PreprocessTest, IntSplitFileErrors) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("edges.txt", "0 1\n2 3\n");
  o.split_file = Write("split.tsv", "0\ttrain\n10\ttest\n");
  ExpectFails(o, {"split.tsv:2: id 10 out of range [0, 4)"});
}

TEST_F(PreprocessTest, StringIdsRelabelInFirstAppearanceOrder) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.ids = IdKind::kString;
  o.edges = Write("e.tsv", "bob\talice\nalice\tcarol\n");
  o.labels = Write("l.txt", "carol 1\nbob 0\ndave 2\n");  // dave: isolated
  o.features = Write("f.csv", "dave,4,4\nalice,1,1\nbob,2,2\ncarol,3,3\n");
  o.split_file = Write("s.tsv", "dave\ttest\nbob\ttrain\n");
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(Strings(ds->original_ids()), (std::vector<std::string>{"bob", "alice", "carol", "dave"}));
  EXPECT_EQ(ds->manifest().id_map, storage::IdMap::kString);
  EXPECT_EQ(Ints(ds->labels()), (std::vector<int64_t>{0, -1, 1, 2}));
  EXPECT_EQ(Ints(ds->indptr()), (std::vector<int64_t>{0, 0, 1, 2, 2}));
  EXPECT_EQ(Ints(ds->indices()), (std::vector<int64_t>{0, 1}));
  const float* f = ds->features().data<float>();
  EXPECT_EQ(std::vector<float>(f, f + 8), (std::vector<float>{2, 2, 1, 1, 3, 3, 4, 4}));
  EXPECT_EQ(Ints(ds->train_ids()), (std::vector<int64_t>{0}));
  EXPECT_EQ(Ints(ds->test_ids()), (std::vector<int64_t>{3}));

  o.output = Path("out2");
  o.features = Write("f2.csv", "alice,1,1\nbob,2,2\n");
  ExpectFails(o, {"f2.csv: no feature row for node 'carol'"});
}

TEST_F(PreprocessTest, RandomSplitIsSeededAndPerClass) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  std::string edges, labels;
  for (int i = 0; i < 200; ++i) {
    edges += std::to_string(i) + " " + std::to_string((i * 7 + 3) % 200) + "\n";
    labels += std::to_string(i % 4) + "\n";
  }
  o.edges = Write("e.txt", edges);
  o.labels = Write("l.txt", labels);
  o.train_per_class = 5;
  o.val_frac = 0.25;
  o.test_frac = 0.5;
  o.seed = 3;
  auto a = Run(o);
  o.output = Path("out_b");
  auto b = Run(o);
  o.output = Path("out_c");
  o.seed = 4;
  auto c = Run(o);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(Ints(a->train_ids()), Ints(b->train_ids()));
  EXPECT_NE(Ints(a->train_ids()), Ints(c->train_ids()));
  EXPECT_EQ(a->train_ids().numel(), 20);
  EXPECT_EQ(a->val_ids().numel(), 50);
  EXPECT_EQ(a->test_ids().numel(), 100);
  std::vector<int> per(4, 0);
  for (int64_t v : Ints(a->train_ids())) per[v % 4]++;
  EXPECT_EQ(per, (std::vector<int>{5, 5, 5, 5}));
}

// Short classes are named in one warning: classes that never occur count
// (labels 0, 2 and 5000000 declare 5000001 classes), and a class id near
// the 2^24 cap costs no per-class work.
TEST_F(PreprocessTest, PerClassSplitWarnsOnceAboutShortClasses) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("e.txt", "0 1\n1 2\n2 3\n3 4\n4 5\n");
  o.labels = Write("l.txt", "0\n0\n2\n5000000\n0\n-1\n");
  o.train_per_class = 2;
  PreprocessReport report;
  auto ds = Run(o, &report);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->train_ids().numel(), 4);  // two of class 0, one each of 2 and 5000000
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_EQ(report.warnings[0],
            "5000000 classes have fewer labelled nodes than --train-per-class 2 "
            "(class 1 has 0, class 2 has 1, class 3 has 0, ...)");
}

TEST_F(PreprocessTest, ExistingOutputIsNotReplaced) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("e.txt", "0 1\n");
  ASSERT_NE(Run(o), nullptr);
  EXPECT_EQ(Preprocess(o, CpuContext()).code(), StatusCode::kAlreadyExists);
  o.overwrite = true;
  EXPECT_OK(Preprocess(o, CpuContext()));
}

// --- OGB ---

class OgbTest : public PreprocessTest {
 protected:
  void WriteOgb() {
    Write("ogb/raw/edge.csv.gz", testutil::Gzip("0,1\n1,2\n2,3\n3,0\n"));
    Write("ogb/raw/num-node-list.csv.gz", testutil::Gzip("4\n"));
    Write("ogb/raw/node-feat.csv.gz", testutil::Gzip("1.0,2.0\n3.0,4.0\n5.0,6.0\n7.0,8.0\n"));
    Write("ogb/raw/node-label.csv.gz", testutil::Gzip("1\nnan\n0\n2\n"));
    Write("ogb/split/time/train.csv.gz", testutil::Gzip("0\n"));
    Write("ogb/split/time/valid.csv.gz", testutil::Gzip("2\n"));
    Write("ogb/split/time/test.csv.gz", testutil::Gzip("3\n1\n"));
  }
};

TEST_F(OgbTest, ReadsRawAndSplitFolders) {
  WriteOgb();
  PreprocessOptions o = Options(InputFormat::kOgb);
  o.input = Path("ogb");
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_nodes(), 4);
  EXPECT_EQ(ds->feature_dim(), 2);
  EXPECT_EQ(Ints(ds->labels()), (std::vector<int64_t>{1, -1, 0, 2}));
  EXPECT_EQ(ds->num_classes(), 3);
  EXPECT_EQ(Ints(ds->indptr()), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(Ints(ds->indices()), (std::vector<int64_t>{3, 0, 1, 2}));
  EXPECT_EQ(Ints(ds->train_ids()), (std::vector<int64_t>{0}));
  EXPECT_EQ(Ints(ds->val_ids()), (std::vector<int64_t>{2}));
  EXPECT_EQ(Ints(ds->test_ids()), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(ds->manifest().source["split_source"], "ogb");
}

TEST_F(OgbTest, HeterogeneousIsUnimplemented) {
  WriteOgb();
  Write("ogb/raw/triplet-type-list.csv.gz", testutil::Gzip("paper,cites,paper\n"));
  PreprocessOptions o = Options(InputFormat::kOgb);
  o.input = Path("ogb");
  ExpectFails(o, {"triplet-type-list.csv.gz", "heterogeneous"});
  EXPECT_EQ(Preprocess(o, CpuContext()).code(), StatusCode::kUnimplemented);
  fs::remove(Path("ogb/raw/triplet-type-list.csv.gz"));
  Write("ogb/raw/relations/paper___cites___paper/edge.csv.gz", testutil::Gzip("0,1\n"));
  ExpectFails(o, {"per-type folders", "heterogeneous"});
}

TEST_F(OgbTest, MultiLabelIsUnimplemented) {
  WriteOgb();
  Write("ogb/raw/node-label.csv.gz", testutil::Gzip("1,0,1\n0,0,1\n1,1,1\n0,0,0\n"));
  PreprocessOptions o = Options(InputFormat::kOgb);
  o.input = Path("ogb");
  ExpectFails(o, {"node-label.csv.gz:1: 3 label columns: multi-label"});
}

TEST_F(OgbTest, EdgeErrorsNameLine) {
  WriteOgb();
  Write("ogb/raw/edge.csv.gz", testutil::Gzip("0,1\n1,9\n"));
  PreprocessOptions o = Options(InputFormat::kOgb);
  o.input = Path("ogb");
  ExpectFails(o, {"edge.csv.gz:2: id 9 out of range [0, 4)"});
}

}  // namespace
}  // namespace foresight::datasets
