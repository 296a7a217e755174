// preprocess --format criteo|csv on small hand-written logs: both id modes,
// spilled counting equal to in-memory counting, split flavours, the Avazu
// layout, ClicksDataset's checks, and one test per bad-input case (file,
// line and what was expected in the message; no dataset left behind).
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "compress_util.h"
#include "foresight/datasets/clicks.h"
#include "foresight/storage/clicks_dataset.h"
#include "foresight/storage/npy.h"
#include "testing/testing.h"

namespace foresight::datasets {
namespace {

namespace fs = std::filesystem;
using testing::WriteFile;

using testing::Ints;
using testing::Strings;

// A Criteo line: label, 13 integers ("" = missing), 26 categoricals.
std::string Criteo(const std::string& label, std::vector<std::string> ints, std::vector<std::string> cats) {
  ints.resize(13);
  cats.resize(26);
  std::string s = label;
  for (const auto& i : ints) s += "\t" + i;
  for (const auto& c : cats) s += "\t" + c;
  return s + "\n";
}

class ClicksPreprocessTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return dir_.File(name); }
  std::string Write(const std::string& name, const std::string& text) {
    WriteFile(Path(name), text);
    return Path(name);
  }
  ClickPreprocessOptions Options(ClickFormat format = ClickFormat::kCriteo) {
    ClickPreprocessOptions o;
    o.format = format;
    o.output = Path("out");
    o.temp_dir = dir_.path();
    return o;
  }
  std::unique_ptr<storage::ClicksDataset> Run(const ClickPreprocessOptions& o, ClickPreprocessReport* r = nullptr) {
    const Status s = PreprocessClicks(o, CpuContext(), r);
    EXPECT_TRUE(s.ok()) << s.ToString();
    auto ds = storage::ClicksDataset::Open(o.output);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? std::move(ds).value() : nullptr;
  }
  // The run must fail with every part in the message and leave nothing.
  void ExpectFails(const ClickPreprocessOptions& o, std::initializer_list<std::string> parts) {
    const Status s = PreprocessClicks(o, CpuContext());
    testing::ExpectErrorContains(s, "PreprocessClicks", parts);
    EXPECT_FALSE(fs::exists(o.output)) << o.output << " exists after a failed run";
    for (const auto& e : fs::directory_iterator(fs::path(o.output).parent_path())) {
      EXPECT_EQ(e.path().filename().string().find("out.tmp"), std::string::npos) << "staging left: " << e.path();
    }
  }
  // Three rows: value "a" of C1 twice, "b" once; C2 missing in row 2.
  std::string SmallCriteo() {
    return Criteo("1", {"0", "3", "-2", ""}, {"a", "x"}) + Criteo("0", {"1"}, {"b", ""}) +
           Criteo("0", {"7"}, {"a", "x"});
  }

  testing::TempDir dir_;
};

TEST_F(ClicksPreprocessTest, CriteoVocabularyIdsDenseLabelsAndSplits) {
  ClickPreprocessOptions o = Options();
  o.train = {Write("day0.tsv", SmallCriteo())};
  o.val = {Write("day1.tsv.gz", testutil::Gzip(Criteo("1", {"2"}, {"c", "y"})))};
  o.test = {Write("day2.tsv.xz", testutil::Xz(Criteo("0", {}, {"a", "zz"})))};
  ClickPreprocessReport r;
  auto ds = Run(o, &r);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->num_samples(), 5);
  EXPECT_EQ(ds->num_dense(), 13);
  ASSERT_EQ(ds->num_fields(), 26);
  EXPECT_EQ(ds->field(0).name, "C1");
  EXPECT_EQ(ds->manifest().kind, "clicks");
  EXPECT_EQ(ds->layout().id_mode, "vocab");
  EXPECT_EQ(ds->layout().train.end, 3);
  EXPECT_EQ(ds->layout().val.end, 4);
  EXPECT_EQ(ds->layout().test.end, 5);
  EXPECT_EQ(r.positives, 2);
  // Values are counted on the training rows: C1 a x2, b -> rows 1 (a), 2
  // (b); "c" (val only) shares row 0.
  EXPECT_EQ(ds->field(0).rows, 3);
  EXPECT_EQ(Ints(ds->ids(0)), (std::vector<int64_t>{1, 2, 1, 0, 1}));
  EXPECT_EQ(Strings(ds->vocab(0)), (std::vector<std::string>{"", "a", "b"}));
  // C2: x x in train; missing -> 0; y, zz unseen in training -> 0.
  EXPECT_EQ(Ints(ds->ids(1)), (std::vector<int64_t>{1, 0, 1, 0, 0}));
  // Fields never set are all missing: one row.
  EXPECT_EQ(ds->field(5).rows, 1);
  EXPECT_EQ(Ints(ds->ids(5)), (std::vector<int64_t>{0, 0, 0, 0, 0}));
  const uint8_t* y = ds->labels().data<uint8_t>();
  EXPECT_EQ(std::vector<int>(y, y + 5), (std::vector<int>{1, 0, 0, 1, 0}));
  const float* d = ds->dense().data<float>();
  EXPECT_FLOAT_EQ(d[0], 0.0f);               // 0
  EXPECT_FLOAT_EQ(d[1], std::log1p(3.0f));   // 3
  EXPECT_FLOAT_EQ(d[2], 0.0f);               // negative -> 0
  EXPECT_FLOAT_EQ(d[3], 0.0f);               // missing -> 0
  EXPECT_FLOAT_EQ(d[13], std::log1p(1.0f));  // row 1, I1

  // --vocab-from all: C1 a x3, b, c -> rows 1 (a), 2 (b), 3 (c): most
  // frequent first, ties by value.
  o.vocab_from_all = true;
  o.output = Path("all");
  ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(Ints(ds->ids(0)), (std::vector<int64_t>{1, 2, 1, 3, 1}));
  EXPECT_EQ(Strings(ds->vocab(0)), (std::vector<std::string>{"", "a", "b", "c"}));
  EXPECT_EQ(Ints(ds->ids(1)), (std::vector<int64_t>{1, 0, 1, 2, 3}));
}

// A staging directory holding every file of a complete clicks dataset is
// still refused, as Dataset::Open refuses a graph's (CheckNotStagingDir).
TEST_F(ClicksPreprocessTest, AStagingDirIsNeverAClicksDataset) {
  ClickPreprocessOptions o = Options();
  o.train = {Write("day0.tsv", SmallCriteo())};
  ASSERT_NE(Run(o), nullptr);
  ASSERT_OK_AND_ASSIGN(auto w, storage::DatasetWriter::Create(Path("again"), false));
  for (const auto& e : fs::directory_iterator(o.output)) {
    fs::copy_file(e.path(), w->staging_dir() + "/" + e.path().filename().string());
  }
  const auto staged = storage::ClicksDataset::Open(w->staging_dir());
  testing::ExpectErrorContains(staged.status(), "ClicksDataset::Open",
                               {" is the staging directory of an unfinished write of dataset " + Path("again")});
}

TEST_F(ClicksPreprocessTest, InputSplitCountsOnlyTheTrainingLines) {
  // 10 lines, train = the first 6 (0.6): "late" appears only after them.
  std::string log;
  for (int i = 0; i < 10; ++i) log += Criteo("0", {}, {i < 6 ? "early" : "late"});
  ClickPreprocessOptions o = Options();
  o.input = {Write("log.tsv", log)};
  o.split_fractions = {0.6, 0.2, 0.2};
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->field(0).rows, 2);
  EXPECT_EQ(Ints(ds->ids(0)), (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 0, 0, 0, 0}));
}

TEST_F(ClicksPreprocessTest, MinFrequencySendsRareValuesToTheSharedRow) {
  ClickPreprocessOptions o = Options();
  o.input = {Write("log.tsv", SmallCriteo())};
  o.split_fractions = {1, 0, 0};
  o.min_frequency = 2;
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->field(0).rows, 2);  // only "a" is kept
  EXPECT_EQ(Ints(ds->ids(0)), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(Ints(ds->ids(1)), (std::vector<int64_t>{1, 0, 1}));
}

TEST_F(ClicksPreprocessTest, SpilledCountingEqualsInMemoryCounting) {
  // Enough distinct values that a 32 KiB budget spills several sorted runs
  // (field C4's 600 unique values are all dropped by --min-frequency).
  std::string log;
  for (int i = 0; i < 600; ++i) {
    log += Criteo(i % 3 == 0 ? "1" : "0", {std::to_string(i)},
                  {"v" + std::to_string(i % 97), "w" + std::to_string((i * 7) % 211), std::to_string(i % 5),
                   "u" + std::to_string(i)});
  }
  ClickPreprocessOptions o = Options();
  o.input = {Write("log.tsv", log)};
  o.vocab_from_all = true;
  o.min_frequency = 3;
  ClickPreprocessReport big_report;
  auto big = Run(o, &big_report);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big_report.count_runs, 0);
  o.output = Path("out2");
  o.memory_budget_bytes = 32 << 10;
  ClickPreprocessReport small_report;
  auto small = Run(o, &small_report);
  ASSERT_NE(small, nullptr);
  EXPECT_GE(small_report.count_runs, 4);
  EXPECT_EQ(big->field(3).rows, 1);
  for (int64_t k = 0; k < 4; ++k) {
    EXPECT_EQ(big->field(k).rows, small->field(k).rows) << k;
    EXPECT_EQ(Ints(big->ids(k)), Ints(small->ids(k))) << k;
    EXPECT_EQ(Strings(big->vocab(k)), Strings(small->vocab(k))) << k;
  }
  EXPECT_EQ(big->field(0).rows, 98);  // 97 values, each >= 3 times
  // 211 values, 600 = 2 * 211 + 178: 178 appear 3 times and are kept.
  EXPECT_EQ(big->field(1).rows, 1 + 178);
}

TEST_F(ClicksPreprocessTest, HashBucketsAndSplitByLineOrder) {
  std::string log;
  for (int i = 0; i < 10; ++i) log += Criteo("0", {}, {"v" + std::to_string(i % 4), i % 2 ? "" : "m"});
  ClickPreprocessOptions o = Options();
  o.input = {Write("log.tsv", log)};
  o.hash_buckets = 1000;
  o.split_fractions = {0.6, 0.2, 0.2};
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(ds->layout().id_mode, "hash");
  EXPECT_EQ(ds->layout().train.end, 6);
  EXPECT_EQ(ds->layout().val.end, 8);
  EXPECT_EQ(ds->field(0).rows, 1000);
  EXPECT_FALSE(ds->field(0).has_vocab);
  const std::vector<int64_t> c1 = Ints(ds->ids(0));
  for (int i = 0; i < 10; ++i) {
    EXPECT_GE(c1[i], 1);
    EXPECT_EQ(c1[i], c1[i % 4]) << "equal values, equal rows";
  }
  EXPECT_NE(c1[0], c1[1]);
  const std::vector<int64_t> c2 = Ints(ds->ids(1));
  EXPECT_EQ(c2[1], 0);  // missing
  EXPECT_GE(c2[0], 1);
  EXPECT_EQ(Ints(ds->ids(2))[0], 0);  // field never set
}

TEST_F(ClicksPreprocessTest, AvazuLayoutWithAndWithoutHeader) {
  const std::string header = "id,click,hour,C1,banner_pos,site_id\n";
  ClickPreprocessOptions o = Options(ClickFormat::kCsv);
  o.columns = {"id", "click", "hour", "C1", "banner_pos", "site_id"};
  o.label = "click";
  o.drop = {"id"};
  o.input = {Write("a.csv", header + "1000009418151094273,0,14102100,1005,0,1fbe01fe\n"
                                     "10000169349117863715,1,14102100,1005,1,1fbe01fe\n"),
             Write("b.csv.gz", testutil::Gzip("10000371904215119486,0,14102101,1002,0,85f751fd\n"))};
  o.split_fractions = {1, 0, 0};
  ClickPreprocessReport r;
  auto ds = Run(o, &r);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(r.header_lines, 1);
  EXPECT_EQ(ds->num_samples(), 3);
  EXPECT_EQ(ds->num_dense(), 0);
  ASSERT_EQ(ds->num_fields(), 4);
  EXPECT_EQ(ds->field(0).name, "hour");
  EXPECT_EQ(ds->field(3).name, "site_id");
  EXPECT_EQ(Ints(ds->ids(0)), (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(Strings(ds->vocab(0)), (std::vector<std::string>{"", "14102100", "14102101"}));
  EXPECT_EQ(Ints(ds->ids(2)), (std::vector<int64_t>{1, 2, 1}));  // banner_pos 0 x2, 1
  const uint8_t* y = ds->labels().data<uint8_t>();
  EXPECT_EQ(std::vector<int>(y, y + 3), (std::vector<int>{0, 1, 0}));
}

TEST_F(ClicksPreprocessTest, CsvDenseColumnsAndExplicitCategoricals) {
  ClickPreprocessOptions o = Options(ClickFormat::kCsv);
  o.columns = {"y", "price", "user", "junk"};
  o.label = "y";
  o.dense = {"price"};
  o.categorical = {"user"};
  o.input = {Write("l.tsv", "1\t2.5\tu1\tq\n0\t\tu2\tq\n")};
  o.delimiter = "tab";
  ExpectFails(o, {"columns junk are named by none of --label, --dense, --categorical, --drop"});
  o.drop = {"junk"};
  auto ds = Run(o);
  ASSERT_NE(ds, nullptr);
  const float* d = ds->dense().data<float>();
  EXPECT_FLOAT_EQ(d[0], std::log1p(2.5f));
  EXPECT_FLOAT_EQ(d[1], 0.0f);
}

TEST_F(ClicksPreprocessTest, SkipBadRowsCountsThem) {
  ClickPreprocessOptions o = Options();
  o.input = {Write("log.tsv", SmallCriteo() + "1\t2\n" + Criteo("2", {}, {}) + Criteo("0", {"x"}, {}))};
  o.skip_bad_rows = true;
  ClickPreprocessReport r;
  auto ds = Run(o, &r);
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(r.bad_rows, 3);
  EXPECT_EQ(ds->num_samples(), 3);
  EXPECT_EQ(ds->manifest().source["bad_rows_skipped"], 3);
}

TEST_F(ClicksPreprocessTest, WrongFieldCount) {
  ClickPreprocessOptions o = Options();
  o.input = {Write("log.tsv", SmallCriteo() + "1\t2\t3\n")};
  ExpectFails(o, {"log.tsv:4: expected 40 tab-separated fields, got 3", "--skip-bad-rows"});
}

TEST_F(ClicksPreprocessTest, NonNumericIntegerField) {
  ClickPreprocessOptions o = Options();
  o.train = {Write("log.tsv", SmallCriteo() + Criteo("0", {"1", "2x"}, {}))};
  ExpectFails(o, {"log.tsv:4: column 3 (I2) must be an integer or empty, got '2x'"});
  o.hash_buckets = 10;  // the one-pass mode checks rows the same way
  ExpectFails(o, {"log.tsv:4: column 3 (I2) must be an integer or empty, got '2x'"});
}

TEST_F(ClicksPreprocessTest, LabelNotZeroOrOne) {
  ClickPreprocessOptions o = Options();
  o.train = {Write("a.tsv", SmallCriteo())};
  o.test = {Write("b.tsv", Criteo("0", {}, {}) + Criteo("-1", {}, {}))};
  ExpectFails(o, {"b.tsv:2: label (column 1, label) must be 0 or 1, got '-1'"});
}

TEST_F(ClicksPreprocessTest, CsvNonNumericDenseColumn) {
  ClickPreprocessOptions o = Options(ClickFormat::kCsv);
  o.columns = {"y", "p", "c"};
  o.label = "y";
  o.dense = {"p"};
  o.input = {Write("l.csv", "y,p,c\n1,2,a\n0,nan,b\n")};
  ExpectFails(o, {"l.csv:3: column 2 (p) must be a finite number or empty, got 'nan' (NaN)"});
}

TEST_F(ClicksPreprocessTest, EmptyFile) {
  ClickPreprocessOptions o = Options();
  o.train = {Write("a.tsv", SmallCriteo())};
  o.val = {Write("empty.tsv", "")};
  ExpectFails(o, {"empty.tsv: no rows (expected at least one tab-separated line of 40 fields)"});
  ClickPreprocessOptions c = Options(ClickFormat::kCsv);
  c.columns = {"y", "c"};
  c.label = "y";
  c.input = {Write("header-only.csv", "y,c\n")};
  ExpectFails(c, {"header-only.csv: no rows"});
}

TEST_F(ClicksPreprocessTest, TruncatedGzip) {
  std::string gz = testutil::Gzip(SmallCriteo() + SmallCriteo());
  gz.resize(gz.size() - 12);
  ClickPreprocessOptions o = Options();
  o.input = {Write("log.tsv.gz", gz)};
  ExpectFails(o, {"log.tsv.gz: truncated (unexpected end of gzip stream)"});
  o.hash_buckets = 10;
  ExpectFails(o, {"log.tsv.gz: truncated (unexpected end of gzip stream)"});
}

TEST_F(ClicksPreprocessTest, CsvColumnThatDoesNotExist) {
  ClickPreprocessOptions o = Options(ClickFormat::kCsv);
  o.columns = {"id", "click", "hour"};
  o.input = {Write("l.csv", "1,0,5\n")};
  o.label = "clicked";
  ExpectFails(o, {"--label names column \"clicked\", which is not in --columns (id,click,hour)"});
  o.label = "click";
  o.drop = {"ID"};
  ExpectFails(o, {"--drop names column \"ID\", which is not in --columns (id,click,hour)"});
  o.drop = {"id"};
  o.dense = {"hour", "minute"};
  ExpectFails(o, {"--dense names column \"minute\""});
  o.dense = {"id"};
  ExpectFails(o, {"column \"id\" is named by both --drop and --dense"});
}

TEST_F(ClicksPreprocessTest, CountingThatCannotFitTheBudgetStops) {
  std::string log;
  for (int i = 0; i < 300; ++i) log += Criteo("0", {}, {"value-number-" + std::to_string(i)});
  ClickPreprocessOptions o = Options();
  o.input = {Write("log.tsv", log)};
  o.memory_budget_bytes = 4096;
  ExpectFails(o, {"need more than the --memory-budget of 4096 bytes", "--hash-buckets"});
}

TEST_F(ClicksPreprocessTest, OpenNamesTheFirstBadRow) {
  ClickPreprocessOptions o = Options();
  o.input = {Write("log.tsv", SmallCriteo())};
  ASSERT_NE(Run(o), nullptr);
  // Break one id of field C1 (rows: 3) at row 2, and see Open name it.
  auto ids = storage::LoadNpy(Path("out/cat_0.npy"));
  ASSERT_TRUE(ids.ok());
  Tensor t = std::move(ids).value();
  t.data<int32_t>()[2] = 3;
  ASSERT_TRUE(storage::SaveNpy(Path("out/cat_0.npy"), t).ok());
  auto ds = storage::ClicksDataset::Open(o.output);
  testing::ExpectErrorContains(ds.status(), "Open", {"cat_0.npy: row 2: id 3 of field \"C1\" is not in [0, 3)"});
  // A graph reader refuses a clicks dataset by name.
  auto graph = storage::Dataset::Open(o.output);
  testing::ExpectErrorContains(graph.status(), "Dataset::Open", {"is a clicks dataset, not a graph"});
}

TEST(ClicksManifestTest, KindIsCheckedAndManifestsWithoutOneAreGraphs) {
  storage::DatasetManifest graph;
  nlohmann::json j = graph.ToJson();
  EXPECT_EQ(j["kind"], "graph");
  j.erase("kind");  // written before clicks datasets existed
  storage::DatasetManifest parsed;
  ASSERT_OK(storage::ParseManifest(j, "m.json", &parsed));
  EXPECT_EQ(parsed.kind, "graph");
  j["kind"] = "tables";
  EXPECT_ERROR_CONTAINS(storage::ParseManifest(j, "m.json", &parsed),
                        "m.json: field \"kind\" must be \"graph\", \"clicks\" or \"sequences\", got \"tables\"");
  j["kind"] = "clicks";
  EXPECT_ERROR_CONTAINS(storage::ParseManifest(j, "m.json", &parsed), "field \"clicks\" is missing");

  storage::ClicksLayout l;
  l.num_samples = 10;
  l.train = {0, 6};
  l.val = {6, 8};
  l.test = {9, 10};  // row 8 in no split
  l.id_mode = "hash";
  storage::ClicksLayout out;
  EXPECT_ERROR_CONTAINS(storage::ParseClicksLayout(l.ToJson(), "m.json", &out),
                        "field \"clicks.splits\" must be consecutive ranges train, val, test");
  l.test = {8, 10};
  ASSERT_OK(storage::ParseClicksLayout(l.ToJson(), "m.json", &out));
  EXPECT_EQ(out.val.size(), 2);
}

TEST_F(ClicksPreprocessTest, BadFlagCombinations) {
  ClickPreprocessOptions o = Options();
  o.input = {Write("log.tsv", SmallCriteo())};
  o.train = {Path("log.tsv")};
  ExpectFails(o, {"not both"});
  o.train.clear();
  o.hash_buckets = 8;
  o.min_frequency = 2;
  ExpectFails(o, {"--hash-buckets and --min-frequency exclude each other"});
  o.min_frequency = 1;
  o.split_fractions = {0.5, 0.2, 0.2};
  ExpectFails(o, {"--split fractions must sum to 1"});
  o.split_fractions = {0.8, 0.1, 0.1};
  o.label = "click";
  ExpectFails(o, {"are for --format csv"});
}

}  // namespace
}  // namespace foresight::datasets
