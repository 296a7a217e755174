// preprocess --format triples on small hand-written files: ids and names
// kept, the graph of training pairs, entities only in val/test kept and
// counted, compressed input, and one test per bad-input case (file, line
// and what was expected in the message; no dataset left behind).
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "compress_util.h"
#include "foresight/datasets/preprocess.h"
#include "foresight/datasets/triples.h"
#include "foresight/storage/dataset.h"
#include "foresight/storage/link_triples.h"
#include "foresight/storage/npy.h"
#include "testing/testing.h"

namespace foresight::datasets {
namespace {

namespace fs = std::filesystem;
using testing::Strings;
using testing::WriteFile;
using testutil::Gzip;
using testutil::Xz;

std::vector<int64_t> Flat(const Tensor& t) {
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel());
}

class TriplesPreprocessTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    WriteFile(dir_.File(name), text);
    return dir_.File(name);
  }
  TriplesPreprocessOptions Options(const std::string& train, const std::string& val, const std::string& test) {
    TriplesPreprocessOptions o;
    o.train = Write("train.txt", train);
    o.val = Write("valid.txt", val);
    o.test = Write("test.txt", test);
    o.output = dir_.File("out");
    o.temp_dir = dir_.path();
    return o;
  }
  void ExpectFails(const TriplesPreprocessOptions& o, std::initializer_list<std::string> parts) {
    const Status s = PreprocessTriples(o, CpuContext());
    testing::ExpectErrorContains(s, "PreprocessTriples", parts);
    EXPECT_FALSE(fs::exists(o.output)) << o.output << " exists after a failed run";
  }
  testing::TempDir dir_;
};

TEST_F(TriplesPreprocessTest, IdsNamesGraphAndUnseenEntities) {
  // Tabs and spaces both separate fields; comments and blank lines skip.
  TriplesPreprocessOptions o = Options("# head rel tail\na\tlikes\tb\nb likes c\n\nc  hates\ta\na likes b\n",
                                       "a hates c\nd likes a\n", "e hates e\n");
  TriplesPreprocessReport r;
  ASSERT_OK(PreprocessTriples(o, CpuContext(), &r));
  EXPECT_EQ(r.num_entities, 5);
  EXPECT_EQ(r.num_relations, 2);
  EXPECT_EQ(r.num_train, 4);
  EXPECT_EQ(r.num_val, 2);
  EXPECT_EQ(r.num_test, 1);
  EXPECT_EQ(r.unseen_entities, 2);  // d (val) and e (test)
  EXPECT_EQ(r.num_edges, 3);        // a->b twice is one edge

  ASSERT_OK_AND_ASSIGN(auto lt, storage::LinkTriples::Open(o.output));
  EXPECT_EQ(lt->num_entities(), 5);
  EXPECT_EQ(lt->num_relations(), 2);
  EXPECT_EQ(lt->layout().unseen_entities, 2);
  EXPECT_EQ(Flat(lt->train()), (std::vector<int64_t>{0, 0, 1, 1, 0, 2, 2, 1, 0, 0, 0, 1}));
  EXPECT_EQ(Flat(lt->val()), (std::vector<int64_t>{0, 1, 2, 3, 0, 0}));
  EXPECT_EQ(Flat(lt->test()), (std::vector<int64_t>{4, 1, 4}));
  EXPECT_EQ(Strings(lt->relation_names()), (std::vector<std::string>{"likes", "hates"}));

  ASSERT_OK_AND_ASSIGN(auto ds, storage::Dataset::Open(o.output));
  EXPECT_EQ(ds->num_nodes(), 5);
  EXPECT_EQ(ds->num_edges(), 3);
  EXPECT_EQ(Strings(ds->original_ids()), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
}

TEST_F(TriplesPreprocessTest, ReadsCompressedFiles) {
  TriplesPreprocessOptions o;
  o.train = dir_.File("train.txt.xz");
  WriteFile(o.train, Xz("00001 _hypernym 00002\n00002 _hypernym 00003\n"));
  o.val = dir_.File("valid.txt.gz");
  WriteFile(o.val, Gzip("00001 _hypernym 00003\n"));
  o.test = Write("test.txt", "00003 _hypernym 00001\n");
  o.output = dir_.File("out");
  ASSERT_OK(PreprocessTriples(o, CpuContext()));
  ASSERT_OK_AND_ASSIGN(auto ds, storage::Dataset::Open(o.output));
  // Leading zeros are kept: names are strings, not numbers.
  EXPECT_EQ(Strings(ds->original_ids()), (std::vector<std::string>{"00001", "00002", "00003"}));
}

TEST_F(TriplesPreprocessTest, MissingFieldNamesFileAndLine) {
  TriplesPreprocessOptions o = Options("a r b\nb r\n", "a r b\n", "a r b\n");
  ExpectFails(o, {"train.txt:2:", "expected 3 fields (head relation tail), got 2"});
}

TEST_F(TriplesPreprocessTest, ExtraFieldIsRefused) {
  TriplesPreprocessOptions o = Options("a r b\n", "a r b\n", "a r b c\n");
  ExpectFails(o, {"test.txt:1:", "expected 3 fields", "got 4"});
}

TEST_F(TriplesPreprocessTest, RelationOnlyInValOrTestIsRefused) {
  TriplesPreprocessOptions o = Options("a r b\n", "a r b\n\nb s a\n", "a r b\n");
  ExpectFails(o, {"valid.txt:3:", "relation 's' appears in no training triple"});
  o = Options("a r b\n", "a r b\n", "b zz a\n");
  ExpectFails(o, {"test.txt:1:", "relation 'zz'"});
}

TEST_F(TriplesPreprocessTest, EmptySplitIsRefused) {
  TriplesPreprocessOptions o = Options("a r b\n", "# nothing here\n\n", "a r b\n");
  ExpectFails(o, {"valid.txt", "no triples", "--val"});
  o = Options("", "a r b\n", "a r b\n");
  ExpectFails(o, {"train.txt", "no triples", "--train"});
}

TEST_F(TriplesPreprocessTest, MissingSplitFileIsRefused) {
  TriplesPreprocessOptions o = Options("a r b\n", "a r b\n", "a r b\n");
  o.test.clear();
  ExpectFails(o, {"--test is missing"});
  o = Options("a r b\n", "a r b\n", "a r b\n");
  o.val = dir_.File("absent.txt");
  ExpectFails(o, {"--val", "absent.txt", "does not exist"});
}

}  // namespace
}  // namespace foresight::datasets

namespace foresight::datasets {
namespace {

// preprocess --task link on a graph format: an edge list split into triples.
class EdgeSplitTest : public ::testing::Test {
 protected:
  PreprocessOptions Options(bool undirected) {
    std::string edges;
    for (int u = 0; u < 40; ++u) {
      for (int k = 1; k <= 3; ++k) edges += std::to_string(u) + " " + std::to_string((u + k * 7) % 40) + "\n";
    }
    testing::WriteFile(dir_.File("edges.txt"), edges);
    PreprocessOptions o;
    o.format = InputFormat::kEdgeList;
    o.edges = dir_.File("edges.txt");
    o.output = dir_.File(undirected ? "und" : "dir");
    o.undirected = undirected;
    o.task = "link";
    o.edge_split = {0.8, 0.1, 0.1};
    o.seed = 5;
    return o;
  }
  testing::TempDir dir_;
};

TEST_F(EdgeSplitTest, EveryEdgeOnceAndTheGraphKeepsOnlyTraining) {
  for (bool undirected : {false, true}) {
    PreprocessOptions o = Options(undirected);
    ASSERT_OK(Preprocess(o, CpuContext()));
    ASSERT_OK_AND_ASSIGN(auto lt, storage::LinkTriples::Open(o.output));
    ASSERT_OK_AND_ASSIGN(auto ds, storage::Dataset::Open(o.output));
    EXPECT_EQ(lt->num_relations(), 1);
    // 120 directed edges; undirected, the pairs u~u+7k are all distinct too.
    const int64_t total = lt->layout().num_train + lt->layout().num_val + lt->layout().num_test;
    EXPECT_EQ(total, 120);
    EXPECT_GT(lt->layout().num_val, 0);
    EXPECT_GT(lt->layout().num_test, 0);
    // The graph holds exactly the training triples (both directions when undirected).
    EXPECT_EQ(ds->num_edges(), lt->layout().num_train * (undirected ? 2 : 1));
    std::set<std::pair<int64_t, int64_t>> graph;
    const int64_t* ip = ds->indptr().data<int64_t>();
    for (int64_t v = 0; v < ds->num_nodes(); ++v) {
      for (int64_t e = ip[v]; e < ip[v + 1]; ++e) graph.insert({ds->indices().data<int32_t>()[e], v});
    }
    auto in_graph = [&](const Tensor& t, int64_t i) {
      const int64_t* p = t.data<int64_t>() + 3 * i;
      return graph.count({p[0], p[2]}) > 0;
    };
    for (int64_t i = 0; i < lt->layout().num_train; ++i) EXPECT_TRUE(in_graph(lt->train(), i)) << i;
    for (int64_t i = 0; i < lt->layout().num_val; ++i) EXPECT_FALSE(in_graph(lt->val(), i)) << i;
    for (int64_t i = 0; i < lt->layout().num_test; ++i) EXPECT_FALSE(in_graph(lt->test(), i)) << i;
  }
}

TEST_F(EdgeSplitTest, SameSeedSameSplitAndBadFractionsRefused) {
  PreprocessOptions o = Options(true);
  ASSERT_OK(Preprocess(o, CpuContext()));
  ASSERT_OK_AND_ASSIGN(auto a, storage::LinkTriples::Open(o.output));
  const std::vector<int64_t> first = Flat(a->val());
  o.overwrite = true;
  ASSERT_OK(Preprocess(o, CpuContext()));
  ASSERT_OK_AND_ASSIGN(auto b, storage::LinkTriples::Open(o.output));
  EXPECT_EQ(Flat(b->val()), first);

  o = Options(true);
  o.output = dir_.File("bad");
  o.edge_split = {0.9, 0.2, 0.1};
  testing::ExpectErrorContains(Preprocess(o, CpuContext()), "sum", {"--edge-split", "sum to 1"});
  o.edge_split = {1.0, 0.0, 0.0};
  testing::ExpectErrorContains(Preprocess(o, CpuContext()), "empty", {"--edge-split", "val split without edges"});
  EXPECT_FALSE(fs::exists(o.output));
}

}  // namespace
}  // namespace foresight::datasets
