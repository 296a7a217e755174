// generate clicks: same bytes for any thread count, the layout the trainer
// expects (shapes, multi-hot bags, id ranges), Zipf-skewed ids spread over
// the table, the target click rate, and the teacher's AUC in the manifest
// recomputed here from the stored probabilities and labels.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "foresight/core/thread_pool.h"
#include "foresight/datasets/clicks.h"
#include "foresight/storage/clicks_dataset.h"
#include "testing/testing.h"

namespace foresight::datasets {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Exact AUC by sorting (ties count one half).
double ExactAuc(const float* p, const uint8_t* y, int64_t b, int64_t e) {
  std::vector<std::pair<float, int>> v;
  for (int64_t i = b; i < e; ++i) v.emplace_back(p[i], y[i]);
  std::sort(v.begin(), v.end());
  double pos = 0, neg = 0, pairs = 0;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    double tp = 0, tn = 0;
    while (j < v.size() && v[j].first == v[i].first) (v[j++].second ? tp : tn) += 1;
    pairs += tp * (neg + 0.5 * tn);
    pos += tp;
    neg += tn;
    i = j;
  }
  return pairs / (pos * neg);
}

class GenerateClicksTest : public ::testing::Test {
 protected:
  GenerateClicksOptions Options(const std::string& name) {
    GenerateClicksOptions o;
    o.output = dir_.File(name);
    o.num_tables = 4;
    o.rows = 5000;
    o.dim = 8;
    o.num_samples = 30000;
    o.num_dense = 5;
    o.bag_sizes = {1, 3, 1, 2};
    o.informative_tables = 2;
    o.seed = 11;
    return o;
  }
  testing::TempDir dir_;
};

TEST_F(GenerateClicksTest, SameBytesOnOneAndTwoThreadsAndAValidLayout) {
  ThreadPool one(1), two(2);
  GenerateClicksOptions a = Options("a"), b = Options("b");
  GenerateClicksReport ra, rb;
  ASSERT_OK(GenerateClicks(a, CpuContext(0, &one), &ra));
  ASSERT_OK(GenerateClicks(b, CpuContext(0, &two), &rb));
  for (const auto& e : fs::directory_iterator(a.output)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(ReadAll(e.path().string()), ReadAll(b.output + "/" + name)) << name;
  }
  EXPECT_EQ(ra.teacher_test_auc, rb.teacher_test_auc);

  auto ds = storage::ClicksDataset::Open(a.output);
  ASSERT_OK(ds.status());
  const storage::ClicksDataset& d = **ds;
  EXPECT_EQ(d.num_samples(), 30000);
  EXPECT_EQ(d.num_dense(), 5);
  ASSERT_EQ(d.num_fields(), 4);
  EXPECT_EQ(d.ids(1).shape(), (Shape{30000, 3}));
  EXPECT_EQ(d.ids(0).shape(), (Shape{30000}));
  EXPECT_EQ(d.field(3).bag_size, 2);
  EXPECT_EQ(d.field(2).rows, 5000);
  EXPECT_EQ(d.layout().train.end, 24000);
  EXPECT_EQ(d.layout().val.end, 27000);
  ASSERT_TRUE(d.click_prob().defined());

  // Click rate near --ctr; the AUC in the manifest is the teacher's on test.
  const uint8_t* y = d.labels().data<uint8_t>();
  const float* p = d.click_prob().data<float>();
  double clicks = 0;
  for (int64_t i = 0; i < d.num_samples(); ++i) clicks += y[i];
  EXPECT_NEAR(clicks / 30000, 0.25, 0.02);
  const double auc = ExactAuc(p, y, d.layout().test.begin, d.layout().test.end);
  EXPECT_NEAR(d.manifest().clicks["teacher"]["test_auc"].get<double>(), auc, 1e-4);
  EXPECT_NEAR(ra.teacher_test_auc, auc, 1e-4);
  EXPECT_GT(auc, 0.7);   // a teacher with something to learn
  EXPECT_LT(auc, 0.95);  // and a moderate temperature

  // Zipf(1.05) ids: the hottest row takes ~1/H of the lookups (H ~ 7.6 for
  // 5000 rows) and is not row 0 (rows are permuted).
  std::map<int64_t, int64_t> counts;
  const int32_t* ids = d.ids(0).data<int32_t>();
  for (int64_t i = 0; i < d.num_samples(); ++i) counts[ids[i]]++;
  auto hottest =
      std::max_element(counts.begin(), counts.end(), [](const auto& l, const auto& r) { return l.second < r.second; });
  EXPECT_NEAR(static_cast<double>(hottest->second) / 30000, 1 / 7.6, 0.02);
  EXPECT_NE(hottest->first, 0);
}

TEST_F(GenerateClicksTest, SeedChangesTheData) {
  GenerateClicksOptions a = Options("a"), b = Options("b");
  b.seed = 12;
  ASSERT_OK(GenerateClicks(a, CpuContext()));
  ASSERT_OK(GenerateClicks(b, CpuContext()));
  EXPECT_NE(ReadAll(a.output + "/cat_0.npy"), ReadAll(b.output + "/cat_0.npy"));
}

TEST_F(GenerateClicksTest, BadOptionsLeaveNothing) {
  GenerateClicksOptions o = Options("x");
  o.bag_sizes = {1, 2};
  EXPECT_ERROR_CONTAINS(GenerateClicks(o, CpuContext()),
                        "--bag-sizes takes one size for all tables or one per table (4), got 2");
  o.bag_sizes = {1};
  o.zipf = 0;
  EXPECT_ERROR_CONTAINS(GenerateClicks(o, CpuContext()), "--zipf must be > 0");
  EXPECT_FALSE(fs::exists(o.output));
}

}  // namespace
}  // namespace foresight::datasets
