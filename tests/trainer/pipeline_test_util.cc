#include "pipeline_test_util.h"

#include <gtest/gtest.h>

#include "synthetic_dataset.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::testing {

Status WritePipelineDataset(const std::string& dir) {
  SyntheticSpec spec;
  spec.num_nodes = kPipelineNodes;
  spec.feature_dim = kPipelineFeatureDim;
  spec.out_degree = 4;
  spec.seed = 11;
  return WriteSyntheticDataset(dir, spec);
}

trainer::TrainOptions PipelineOptions(const std::string& dataset) {
  trainer::TrainOptions o;
  o.dataset = dataset;
  o.model = "sage";
  o.epochs = 3;
  o.batch_size = 32;
  o.fanouts = {5, 3};
  o.hidden = 16;
  o.lr = 0.02f;
  o.dropout = 0.3f;
  o.eval_batch_size = 256;
  o.threads = 2;
  o.progress = false;
  o.seed = 3;
  return o;
}

TempDir* PipelineSuite::dir_ = nullptr;

void PipelineSuite::SetUpTestSuite() {
  dir_ = new TempDir();
  ASSERT_OK(WritePipelineDataset(DataDir()));
}

void PipelineSuite::TearDownTestSuite() {
  delete dir_;
  dir_ = nullptr;
}

std::vector<nlohmann::json> EpochLines(const std::string& metrics_file) {
  std::vector<nlohmann::json> out;
  for (nlohmann::json& j : ReadJsonLines(metrics_file)) {
    if (!j.contains("final")) out.push_back(std::move(j));
  }
  return out;
}

std::vector<trainer::EpochMetrics> TrainHistory(const trainer::TrainOptions& options) {
  trainer::TrainSummary s;
  const Status st = trainer::Train(options, &s);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return s.history;
}

void ExpectSameResults(const std::vector<trainer::EpochMetrics>& expected,
                       const std::vector<trainer::EpochMetrics>& actual, const std::string& what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  for (size_t e = 0; e < expected.size(); ++e) {
    // Exact equality: the pipeline must not change a single bit.
    EXPECT_EQ(expected[e].loss, actual[e].loss) << what << ", epoch " << e + 1;
    EXPECT_EQ(expected[e].train_acc, actual[e].train_acc) << what << ", epoch " << e + 1;
    EXPECT_EQ(expected[e].val_acc, actual[e].val_acc) << what << ", epoch " << e + 1;
    EXPECT_EQ(expected[e].test_acc, actual[e].test_acc) << what << ", epoch " << e + 1;
    EXPECT_EQ(expected[e].seeds, actual[e].seeds) << what << ", epoch " << e + 1;
    EXPECT_EQ(expected[e].sampled_edges, actual[e].sampled_edges) << what << ", epoch " << e + 1;
  }
}

}  // namespace foresight::testing
