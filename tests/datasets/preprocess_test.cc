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

using testing::Ints;
using testing::Strings;

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
    const fs::path parent = fs::path(o.output).parent_path();
    if (!fs::exists(parent)) return;  // removed with what it made
    for (const auto& e : fs::directory_iterator(parent)) {
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
  ExpectFails(o, {"l.txt:3: node 'dave' has a label but no edge names it", "--allow-isolated-nodes"});
  o.allow_isolated_nodes = true;
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

// ---- Files as published: headers, wide CSV label tables, class names ----

// MUSAE (Rozemberczki et al.) as distributed: an edge CSV with an "id_1,id_2"
// header and a target CSV with a header, an id, a name that may hold quoted
// commas and quotes, and a class name (Facebook) or an integer class
// (GitHub). Both must preprocess with flags alone.
constexpr const char* kMusaeEdges = "id_1,id_2\n0,1\n1,2\n2,3\n3,0\n4,0\n";
constexpr const char* kFacebookTarget =
    "id,facebook_id,page_name,page_type\n"
    "0,145647315578475,The Voice of China 中国好声音,tvshow\n"
    "1,191483281412,\"U.S. Consulate General Mumbai, India\",government\n"
    "2,144761358898518,\"Cabinet \"\"Office\"\", Ministry\",government\n"
    "3,568700043198473,Mark Bailey MP - Labor for Miller,politician\n"
    "4,1408935539376139,Acme Widgets,company\n";
constexpr const char* kGitTarget =
    "id,name,ml_target\n0,Eiryyy,0\n1,shawflying,0\n2,JpMCarrilho,1\n3,SuhwanCha,0\n4,sunilangadi2,1\n";

TEST_F(PreprocessTest, MusaeFacebookWithFlagsAlone) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("musae_facebook_edges.csv", kMusaeEdges);
  o.labels = Write("musae_facebook_target.csv", kFacebookTarget);
  o.label_column = "page_type";
  o.undirected = true;
  PreprocessReport report;
  auto ds = Run(o, &report);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_nodes(), 5);
  EXPECT_EQ(report.input_edges, 5);  // the header is no edge
  EXPECT_EQ(ds->num_classes(), 4);
  // Class ids in sorted name order.
  EXPECT_EQ(ds->manifest().class_names,
            (std::vector<std::string>{"company", "government", "politician", "tvshow"}));
  EXPECT_EQ(Ints(ds->labels()), (std::vector<int64_t>{3, 1, 1, 2, 0}));
  const nlohmann::json& src = ds->manifest().source;
  EXPECT_EQ(src["edge_file"]["header"], (nlohmann::json{"id_1", "id_2"}));
  EXPECT_EQ(src["label_file"]["label_column"], 3);
  EXPECT_EQ(src["label_file"]["header"][2], "page_name");

  // The same column by index, and the names survive a manifest round trip.
  o.output = Path("out_index");
  o.label_column = "3";
  auto by_index = Run(o);
  ASSERT_NE(by_index, nullptr);
  EXPECT_EQ(Ints(by_index->labels()), Ints(ds->labels()));
  EXPECT_EQ(by_index->manifest().class_names, ds->manifest().class_names);

  // Without --label-column a 4-column file is refused with its columns.
  o.output = Path("out_bad");
  o.label_column = "";
  ExpectFails(o, {"musae_facebook_target.csv:2: 4 columns ('id', 'facebook_id', 'page_name', 'page_type')",
                  "--label-column NAME|INDEX"});
  o.label_column = "page_kind";
  ExpectFails(o, {"musae_facebook_target.csv:1: no column named 'page_kind'", "'page_type'"});
  // A byte order mark (spreadsheet exports) is no part of the first name.
  o.output = Path("out_bom");
  o.labels = Write("bom.csv", "\xEF\xBB\xBFid,page_type\n0,tvshow\n1,company\n2,tvshow\n3,tvshow\n4,company\n");
  o.label_column = "page_type";
  o.id_column = "id";
  auto bom = Run(o);
  ASSERT_NE(bom, nullptr);
  EXPECT_EQ(Ints(bom->labels()), (std::vector<int64_t>{1, 0, 1, 1, 0}));
  o.output = Path("out_bad");
  o.id_column = "";
  o.labels = Path("musae_facebook_target.csv");
  o.label_column = "7";
  ExpectFails(o, {"musae_facebook_target.csv:2: --label-column 7 is not a column of this 4-column file"});
  // A named column past the end of rows shorter than the header (the fuzzer
  // found it read past the row's fields).
  o.labels = Write("short_rows.csv", "id,name,kind,label\n0,a,x\n1,b,y\n");
  o.label_column = "label";
  ExpectFails(o, {"short_rows.csv:2: column 'label' (--label-column) is column 3 of the header line, but the rows "
                  "have 3 columns"});
}

TEST_F(PreprocessTest, MusaeGithubWithFlagsAlone) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("musae_git_edges.csv", kMusaeEdges);
  o.labels = Write("musae_git_target.csv", kGitTarget);
  o.label_column = "ml_target";
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_nodes(), 5);
  EXPECT_EQ(ds->num_edges(), 5);
  EXPECT_EQ(ds->num_classes(), 2);
  EXPECT_TRUE(ds->manifest().class_names.empty());  // integer classes stay ids
  EXPECT_EQ(Ints(ds->labels()), (std::vector<int64_t>{0, 0, 1, 0, 1}));
  // --class-names reads the same integers as names ("0" and "1").
  o.output = Path("out_names");
  o.class_names = true;
  auto named = Run(o);
  ASSERT_NE(named, nullptr);
  EXPECT_EQ(named->manifest().class_names, (std::vector<std::string>{"0", "1"}));
}

TEST_F(PreprocessTest, HeaderDetectionAndOverrides) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("e.csv", "id_1,id_2\n0,1\n1,2\n");
  o.labels = Write("l.csv", "node,label\n0,1\n1,0\n2,1\n");
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_nodes(), 3);
  EXPECT_EQ(Ints(ds->labels()), (std::vector<int64_t>{1, 0, 1}));
  // --no-header reads the first line as data, and says why it fails.
  o.output = Path("out_no");
  o.header = HeaderMode::kAbsent;
  ExpectFails(o, {"l.csv:1: node id 'node' is not an integer"});
  o.labels = "";
  ExpectFails(o, {"e.csv:1: node id 'id_1' is not an integer"});
  // --header skips the first line even when it looks like data.
  o.header = HeaderMode::kPresent;
  o.edges = Write("e2.csv", "5,5\n0,1\n1,2\n");
  o.labels = Write("l2.csv", "id,label\n0,1\n1,0\n2,1\n");
  PreprocessReport r;
  auto forced = Run(o, &r);
  ASSERT_NE(forced, nullptr);
  EXPECT_EQ(r.input_edges, 2);
  EXPECT_EQ(forced->num_nodes(), 3);
  // A first line with a stray non-integer is an error, not a header.
  o.header = HeaderMode::kAuto;
  o.output = Path("out_bad");
  o.edges = Write("e3.csv", "0,x\n0,1\n");
  ExpectFails(o, {"e3.csv:1: node id 'x' is not an integer"});
  // A column name needs a header line.
  o.edges = Write("e4.csv", "0,1\n1,2\n2,0\n");
  o.labels = Write("l4.csv", "0,a\n1,b\n2,a\n");
  o.label_column = "label";
  o.header = HeaderMode::kAbsent;
  ExpectFails(o, {"l4.csv:1: --label-column 'label' names a column, but the file has no header line"});
}

// --ids string never turns a header into an edge: a line of words above
// integer ids, or conventional column names, is a header; otherwise the
// first line is data (logged) unless --header says otherwise.
TEST_F(PreprocessTest, StringIdsNeverTurnAHeaderIntoAnEdge) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.ids = IdKind::kString;
  o.edges = Write("musae_facebook_edges.csv", kMusaeEdges);
  o.labels = Write("musae_facebook_target.csv", kFacebookTarget);
  o.label_column = "page_type";
  PreprocessReport r;
  auto ds = Run(o, &r);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_nodes(), 5);
  EXPECT_EQ(r.input_edges, 5);
  EXPECT_EQ(Strings(ds->original_ids()), (std::vector<std::string>{"0", "1", "2", "3", "4"}));

  o.output = Path("out_names");
  o.labels = "";
  o.label_column = "";
  o.edges = Write("names.csv", "source,target\nalice,bob\nbob,carol\n");
  auto named = Run(o);
  ASSERT_NE(named, nullptr);
  EXPECT_EQ(Strings(named->original_ids()), (std::vector<std::string>{"alice", "bob", "carol"}));

  // Words that are no column names: data, unless --header.
  o.output = Path("out_words");
  o.edges = Write("words.csv", "person,friend\nalice,bob\n");
  auto words = Run(o);
  ASSERT_NE(words, nullptr);
  EXPECT_EQ(words->num_nodes(), 4);
  o.output = Path("out_forced");
  o.header = HeaderMode::kPresent;
  auto forced = Run(o);
  ASSERT_NE(forced, nullptr);
  EXPECT_EQ(Strings(forced->original_ids()), (std::vector<std::string>{"alice", "bob"}));

  // A label file with string ids and a header of words over integer labels.
  o.header = HeaderMode::kAuto;
  o.output = Path("out_labels");
  o.labels = Write("l.tsv", "who\tgroup\nbob\t1\nalice\t0\n");
  auto labelled = Run(o);
  ASSERT_NE(labelled, nullptr);
  EXPECT_EQ(Strings(labelled->original_ids()), (std::vector<std::string>{"person", "friend", "alice", "bob"}));
  EXPECT_EQ(Ints(labelled->labels()), (std::vector<int64_t>{-1, -1, 0, 1}));
}

TEST_F(PreprocessTest, ClassNameLabels) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("e.txt", "0 1\n1 2\n2 3\n");
  o.labels = Write("l.csv", "0,beta\n1,\n2,alpha\n3,beta\n");  // empty: unlabelled
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->manifest().class_names, (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_EQ(Ints(ds->labels()), (std::vector<int64_t>{1, -1, 0, 1}));
  EXPECT_EQ(ds->num_classes(), 2);
  // Integer labels first, then a name: the message points at --class-names.
  o.output = Path("out_mixed");
  o.labels = Write("mixed.csv", "0,1\n1,0\n2,other\n");
  ExpectFails(o, {"mixed.csv:3: label 'other' is not an integer >= -1", "--class-names"});
  o.labels = Write("empty_first.csv", "0,\n1,0\n");
  ExpectFails(o, {"empty_first.csv:1: empty label"});
  // One class name per row under a conventional column name: a header.
  o.output = Path("out_rows");
  o.labels = Write("rows.csv", "page_type\ntvshow\ncompany\ntvshow\npolitician\n");
  auto rows = Run(o);
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(rows->manifest().class_names, (std::vector<std::string>{"company", "politician", "tvshow"}));
  EXPECT_EQ(Ints(rows->labels()), (std::vector<int64_t>{2, 0, 2, 1}));
  // String ids and --class-names: the header is still told by its names.
  o.output = Path("out_strings");
  o.ids = IdKind::kString;
  o.class_names = true;
  o.labels = Write("named.csv", "node,label\n0,7\n3,x\n");
  auto strings = Run(o);
  ASSERT_NE(strings, nullptr);
  EXPECT_EQ(strings->manifest().class_names, (std::vector<std::string>{"7", "x"}));
  EXPECT_EQ(Ints(strings->labels()), (std::vector<int64_t>{0, -1, -1, 1}));
}

// ---- Empty and inconsistent input (issue 18 item 4) ----

TEST_F(PreprocessTest, EmptyEdgeFileIsRefusedUnlessAllowed) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("empty.txt", "");
  ExpectFails(o, {"empty.txt: no edges (the file is empty)", "--allow-empty-edges"});
  o.edges = Write("header_only.csv", "# a comment\nid_1,id_2\n\n");
  ExpectFails(o, {"header_only.csv: no edges (its 3 lines are blank, comments or a header)"});
  o.edges = Write("empty.bin", "");
  o.edge_dtype = EdgeDType::kInt32;
  ExpectFails(o, {"empty.bin: no edges (the file is empty)"});
  // Allowed: nodes come from the labels; nothing at all is still refused.
  o.allow_empty_edges = true;
  ExpectFails(o, {"edgelist: 0 nodes"});
  o.edge_dtype = EdgeDType::kText;
  o.edges = Write("empty.txt", "");
  o.labels = Write("l.txt", "0\n1\n1\n");
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_nodes(), 3);
  EXPECT_EQ(ds->num_edges(), 0);
}

TEST_F(PreprocessTest, LinqsEmptyCitesAreRefusedUnlessAllowed) {
  PreprocessOptions o = Options(InputFormat::kLinqs);
  o.input = Linqs(kContent, "# no citations\n");
  ExpectFails(o, {"x.cites: no citations (its 1 lines are blank or comments)", "--allow-empty-edges"});
  o.allow_empty_edges = true;
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_nodes(), 3);
  EXPECT_EQ(ds->num_edges(), 0);
  // LINQS class names reach the manifest too.
  EXPECT_EQ(ds->manifest().class_names, (std::vector<std::string>{"A", "B"}));
}

TEST_F(PreprocessTest, EmptyOrUnlabelledLabelFileIsRefused) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("e.txt", "0 1\n1 2\n");
  o.labels = Write("empty.txt", "");
  ExpectFails(o, {"empty.txt: no labels (the file is empty)", "leave out --labels"});
  o.labels = Write("header.csv", "id,label\n");
  ExpectFails(o, {"header.csv: no labels (its 1 lines are blank, comments or a header)"});
  o.labels = Write("unlabelled.txt", "-1\n-1\n-1\n");
  ExpectFails(o, {"unlabelled.txt: no node has a label", "0 classes"});
}

TEST_F(PreprocessTest, LabelIdsBeyondTheEdgesAreRefusedUnlessAllowed) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("e.txt", "0 1\n1 2\n");
  o.labels = Write("l.txt", "0 1\n9 0\n1 0\n2 1\n7 1\n");
  ExpectFails(o, {"l.txt:2: node 9 has a label but no edge names it (2 labelled nodes above e.txt's largest id 2)",
                  "--allow-isolated-nodes"});
  o.allow_isolated_nodes = true;
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_nodes(), 10);
  // String ids: a feature row for a node without edges is refused likewise.
  o.output = Path("out_s");
  o.allow_isolated_nodes = false;
  o.ids = IdKind::kString;
  o.labels = "";
  o.features = Write("f.csv", "0,1\n1,1\n2,1\nghost,1\n");
  ExpectFails(o, {"f.csv:4: node 'ghost' has a feature row but no edge names it"});
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

// A failed run removes the output's parent directories that it made, and
// only those (issue 17: an empty parent was left behind).
TEST_F(PreprocessTest, FailedRunLeavesNoDirectoryItMade) {
  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("in/edges.txt", "0 1\n1 x\n");
  o.output = Path("new/data/out");
  ExpectFails(o, {"edges.txt:2:"});
  EXPECT_FALSE(fs::exists(Path("new")));
  fs::create_directory(Path("new"));
  ExpectFails(o, {"edges.txt:2:"});
  EXPECT_TRUE(fs::is_directory(Path("new")));
  EXPECT_FALSE(fs::exists(Path("new/data")));
  // A missing input fails the same way.
  o.edges = Path("in/missing.txt");
  ExpectFails(o, {"missing.txt"});
  EXPECT_FALSE(fs::exists(Path("new/data")));
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
  // The dataset has no features, which is a warning of its own.
  std::vector<std::string> split_warnings;
  for (const std::string& w : report.warnings) {
    if (w.find("--train-per-class") != std::string::npos) split_warnings.push_back(w);
  }
  ASSERT_EQ(split_warnings.size(), 1u);
  EXPECT_EQ(split_warnings[0],
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

// Per-node labels read before the edges stay in RAM while the edges are
// sorted, so the sort's buffer gives up their bytes: with labels taking most
// of the budget the same edges spill into more runs, and the graph is the
// same. (At 100M nodes the labels are 0.8 GB: the sort used to take the
// whole budget beside them, and the process peaked 0.8 GB over it.)
TEST_F(PreprocessTest, PerNodeLabelsAreChargedToTheEdgeSortBudget) {
  constexpr int64_t kNodes = 40000, kEdges = 20000;
  std::string text;
  for (int64_t e = 0; e < kEdges; ++e) {
    text += std::to_string((e * 7919) % kNodes) + " " + std::to_string((e * 104729 + 1) % kNodes) + "\n";
  }
  Tensor labels = Tensor::Empty({kNodes}, DType::kI32);
  for (int64_t v = 0; v < kNodes; ++v) labels.data<int32_t>()[v] = static_cast<int32_t>(v % 3);
  ASSERT_OK(storage::SaveNpy(Path("labels.npy"), labels));

  PreprocessOptions o = Options(InputFormat::kEdgeList);
  o.edges = Write("edges.txt", text);
  o.allow_isolated_nodes = true;
  // 32 bytes a buffered edge: this budget alone holds 12,000 edges (two
  // runs for 20,000); beside 40,000 labels of 8 bytes (320,000 bytes) it
  // holds 2,000 (ten runs).
  o.memory_budget_bytes = 384000;
  PreprocessReport without;
  auto plain = Run(o, &without);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(without.spilled_runs, 1);  // the last run is merged from memory

  o.labels = Path("labels.npy");
  o.output = Path("out2");
  PreprocessReport with;
  auto labelled = Run(o, &with);
  ASSERT_NE(labelled, nullptr);
  EXPECT_EQ(with.spilled_runs, 9);
  ASSERT_EQ(labelled->num_edges(), plain->num_edges());
  EXPECT_EQ(0, std::memcmp(labelled->indices().raw_data(), plain->indices().raw_data(),
                           static_cast<size_t>(plain->indices().nbytes())));
}

}  // namespace
}  // namespace foresight::datasets
