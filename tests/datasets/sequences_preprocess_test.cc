// `preprocess --format sequences`: "user item" lines (space or tab; plain,
// gzip or xz) become a sequences dataset numpy reads (items renumbered
// 1..I, offsets per user, the leave-one-out split, users with fewer than 3
// actions kept for training only); bad input stops with file:line and what
// was expected, and leaves nothing at the output.
#include <filesystem>
#include <string>

#include "compress_util.h"
#include "foresight/datasets/sequences.h"
#include "foresight/storage/npy.h"
#include "foresight/storage/sequences_dataset.h"
#include "testing/testing.h"

namespace foresight::datasets {
namespace {

// Users 7 (4 actions), 3 (2 actions) and 9 (3 actions); item ids 10..40.
const char* kLog = "7 20\n7 10\n7 40\n7 20\n3 30\n3\t10\n\n9 40\n9 30\n9 10\n";

Status Preprocess(const std::string& input, const std::string& output) {
  SequencesPreprocessOptions o;
  o.input = input;
  o.output = output;
  return PreprocessSequences(o);
}

TEST(SequencesPreprocess, WritesTheLeaveOneOutSplit) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("log.txt"), kLog);
  SequencesPreprocessOptions o;
  o.input = dir.File("log.txt");
  o.output = dir.File("out");
  SequencesPreprocessReport r;
  ASSERT_OK(PreprocessSequences(o, &r));
  EXPECT_EQ(r.num_users, 3);
  EXPECT_EQ(r.num_items, 4);
  EXPECT_EQ(r.num_actions, 9);
  EXPECT_EQ(r.eval_users, 2);
  ASSERT_OK_AND_ASSIGN(auto ds, storage::SequencesDataset::Open(o.output));
  // Items by ascending id: 10 -> 1, 20 -> 2, 30 -> 3, 40 -> 4.
  const std::vector<int32_t> items = {2, 1, 4, 2, 3, 1, 4, 3, 1};
  for (size_t i = 0; i < items.size(); ++i) EXPECT_EQ(ds->items()[i], items[i]) << i;
  EXPECT_EQ(std::vector<int64_t>(ds->offsets(), ds->offsets() + 4), (std::vector<int64_t>{0, 4, 6, 9}));
  EXPECT_EQ(ds->valid(0), 4);
  EXPECT_EQ(ds->test(0), 2);
  EXPECT_EQ(ds->train_length(0), 2);
  EXPECT_EQ(ds->valid(1), 0);  // 2 actions: all training, not evaluated
  EXPECT_EQ(ds->test(1), 0);
  EXPECT_EQ(ds->train_length(1), 2);
  EXPECT_EQ(ds->valid(2), 3);
  EXPECT_EQ(ds->test(2), 1);
  EXPECT_EQ(ds->train_length(2), 1);
  ASSERT_OK_AND_ASSIGN(Tensor users, storage::LoadNpy(o.output + "/user_ids.npy"));
  EXPECT_EQ(users.data<int64_t>()[0], 7);
  EXPECT_EQ(users.data<int64_t>()[1], 3);
  ASSERT_OK_AND_ASSIGN(Tensor ids, storage::LoadNpy(o.output + "/item_ids.npy"));
  EXPECT_EQ(ids.data<int64_t>()[0], -1);
  EXPECT_EQ(ids.data<int64_t>()[4], 40);
}

TEST(SequencesPreprocess, ReadsGzipAndXzAlike) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("log.gz"), testutil::Gzip(kLog));
  testing::WriteFile(dir.File("log.xz"), testutil::Xz(kLog));
  ASSERT_OK(Preprocess(dir.File("log.gz"), dir.File("gz")));
  ASSERT_OK(Preprocess(dir.File("log.xz"), dir.File("xz")));
  ASSERT_OK_AND_ASSIGN(auto a, storage::SequencesDataset::Open(dir.File("gz")));
  ASSERT_OK_AND_ASSIGN(auto b, storage::SequencesDataset::Open(dir.File("xz")));
  ASSERT_EQ(a->num_users(), 3);
  for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(a->items()[i], b->items()[i]);
}

struct BadCase {
  const char* text;
  const char* error;
};

TEST(SequencesPreprocess, BadInputNamesFileLineAndLeavesNothing) {
  const BadCase cases[] = {
      {"1 5\n1 6 7\n", "log.txt:2: expected 'user item' (two integer ids separated by a space or tab), got 3 fields"},
      {"1 5\n1\n", "log.txt:2: expected 'user item' (two integer ids separated by a space or tab), got 1 field"},
      {"1 5\nx 6\n", "log.txt:2: expected an integer user id, got 'x'"},
      {"1 5\n1 6.5\n", "log.txt:2: expected an integer item id, got '6.5'"},
      {"1 5\n2 6\n1 7\n", "log.txt:3: expected the lines of each user together (in time order), but user 1 "
                          "already had lines from line 1"},
      {"", "log.txt: no 'user item' lines (an empty input)"},
      {"# only a comment\n\n", "log.txt: no 'user item' lines (an empty input)"},
  };
  for (const BadCase& c : cases) {
    testing::TempDir dir;
    testing::WriteFile(dir.File("log.txt"), c.text);
    EXPECT_ERROR_CONTAINS(Preprocess(dir.File("log.txt"), dir.File("out")), c.error);
    EXPECT_FALSE(std::filesystem::exists(dir.File("out"))) << c.text;
    // No staging directory left beside it either.
    int entries = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path())) entries += e.path().filename() != "log.txt";
    EXPECT_EQ(entries, 0) << c.text;
  }
}

TEST(SequencesPreprocess, RefusesAMissingInputAndAnExistingOutput) {
  testing::TempDir dir;
  EXPECT_ERROR_CONTAINS(Preprocess(dir.File("absent.txt"), dir.File("out")), "absent.txt does not exist");
  testing::WriteFile(dir.File("log.txt"), kLog);
  ASSERT_OK(Preprocess(dir.File("log.txt"), dir.File("out")));
  EXPECT_FALSE(Preprocess(dir.File("log.txt"), dir.File("out")).ok());
}

}  // namespace
}  // namespace foresight::datasets
