// generate graph --edge-list: a dataset's edges written as text (plain and
// gzip) and preprocessed back give the same CSR; the file appears whole or
// not at all.
#include "foresight/datasets/edge_list_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/datasets/generate.h"
#include "foresight/datasets/preprocess.h"
#include "foresight/storage/dataset.h"
#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight::datasets {
namespace {

std::vector<int64_t> I64s(const Tensor& t) { return testing::VectorOf<int64_t>(t); }
std::vector<int32_t> I32s(const Tensor& t) { return testing::VectorOf<int32_t>(t); }

TEST(EdgeListTextTest, PreprocessingTheTextGivesTheSameGraph) {
  testing::TempDir dir;
  GenerateGraphOptions g;
  g.output = dir.File("gen");
  g.num_nodes = 3000;
  g.num_edges = 40000;
  g.feature_dim = 4;
  g.num_classes = 4;
  g.keep_multi_edges = false;  // preprocess drops repeated edges by default
  ASSERT_OK(GenerateGraph(g, CpuContext(0)));
  ASSERT_OK_AND_ASSIGN(auto want, storage::Dataset::Open(g.output));
  for (const char* name : {"edges.txt", "edges.txt.gz"}) {
    SCOPED_TRACE(name);
    EdgeListTextReport r;
    ASSERT_OK(WriteEdgeListText(g.output, dir.File(name), /*progress=*/false, &r));
    EXPECT_EQ(r.edges, want->num_edges());
    EXPECT_GT(r.bytes, 0);
    EXPECT_FALSE(testing::PathExists(dir.File(std::string(name) + ".part")));
    PreprocessOptions p;
    p.edges = dir.File(name);
    p.labels = g.output + "/labels.npy";
    p.allow_isolated_nodes = true;
    p.header = HeaderMode::kAbsent;
    p.output = dir.File(std::string("pre-") + name);
    ASSERT_OK(Preprocess(p, CpuContext(0)));
    ASSERT_OK_AND_ASSIGN(auto got, storage::Dataset::Open(p.output));
    EXPECT_EQ(got->num_nodes(), want->num_nodes());
    EXPECT_EQ(I64s(got->indptr()), I64s(want->indptr()));
    EXPECT_EQ(I32s(got->indices()), I32s(want->indices()));
  }
  // The text of the first rows, as preprocess reads it.
  const std::string text = testing::ReadFile(dir.File("edges.txt"));
  const int64_t* ip = want->indptr().data<int64_t>();
  const int32_t* ix = want->indices().data<int32_t>();
  int64_t v = 0;
  while (ip[v + 1] == ip[v]) ++v;
  EXPECT_EQ(text.substr(0, text.find('\n')), std::to_string(ix[ip[v]]) + " " + std::to_string(v));
}

TEST(EdgeListTextTest, AFailedWriteLeavesNoFile) {
  testing::TempDir dir;
  testing::ExpectErrorContains(WriteEdgeListText(dir.File("absent"), dir.File("e.txt"), false, nullptr), "absent",
                               {"absent"});
  EXPECT_FALSE(testing::PathExists(dir.File("e.txt")));
  EXPECT_FALSE(testing::PathExists(dir.File("e.txt.part")));
}

}  // namespace
}  // namespace foresight::datasets
