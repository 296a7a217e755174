// `train --task link --model sage|gcn|gat` end to end on a small clustered
// graph split by `preprocess --task link`: the encoders learn the clusters
// (filtered MRR far above chance) from one-hot, learned or degree inputs
// with a dot or DistMult decoder; the same seed gives the same per-step
// losses with 1 or 2 threads, bit for bit; sampled_softmax and the dense
// optimizer/lr reach the encoder's training; the metrics file has the
// ranking keys; a graph that holds a validation edge is refused, naming
// it; options a GNN encoder does not take are refused by name.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/datasets/preprocess.h"
#include "foresight/storage/npy.h"
#include "foresight/trainer/trainer.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

using foresight::testing::StepLosses;

// 120 nodes in 8 clusters of 15: each node links to 4 members of its
// cluster and 1 node anywhere, undirected; 80/10/10 edge split.
class LinkGnnTrainerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    uint64_t state = 777;
    auto next = [&]() {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int64_t>(state >> 33);
    };
    std::string edges;
    for (int64_t v = 0; v < 120; ++v) {
      const int64_t c = v / 15;
      for (int k = 0; k < 4; ++k) edges += std::to_string(v) + " " + std::to_string(c * 15 + next() % 15) + "\n";
      edges += std::to_string(v) + " " + std::to_string(next() % 120) + "\n";
    }
    testing::WriteFile(dir_->File("edges.txt"), edges);
    datasets::PreprocessOptions o;
    o.format = datasets::InputFormat::kEdgeList;
    o.edges = dir_->File("edges.txt");
    o.output = dir_->File("graph");
    o.undirected = true;
    o.task = "link";
    o.edge_split = {0.8, 0.1, 0.1};
    o.seed = 2;
    ASSERT_OK(datasets::Preprocess(o, CpuContext()));
  }
  static void TearDownTestSuite() { delete dir_; }

  static TrainOptions Options(const std::string& model) {
    TrainOptions o;
    o.dataset = dir_->File("graph");
    o.task = "link";
    o.model = model;
    o.node_features = "one-hot";
    o.hidden = 32;
    o.embedding_dim = 32;
    o.fanouts = {10, 10};
    o.heads = 2;
    o.dropout = 0.0f;
    o.negatives = 30;
    o.batch_size = 64;
    o.epochs = 20;
    o.lr = 0.01f;
    o.weight_decay = 0.0f;
    o.eval_epochs = 5;
    o.progress = false;
    o.threads = 1;
    o.seed = 4;
    return o;
  }


  static testing::TempDir* dir_;
};
testing::TempDir* LinkGnnTrainerTest::dir_ = nullptr;

TEST_F(LinkGnnTrainerTest, EncodersLearnTheClusters) {
  // Chance is an MRR of about 0.045 and Hits@10 of 0.08 (120 candidates);
  // an encoder that learned the clusters ranks the true end among its 15
  // cluster members (at best an MRR of about 0.22, Hits@10 0.67).
  struct Case {
    const char* model;
    const char* features;
    const char* decoder;
  };
  for (const Case& c : {Case{"sage", "one-hot", "dot"}, Case{"sage", "learned:16", "distmult"},
                        Case{"gcn", "one-hot", "dot"}, Case{"gat", "one-hot", "distmult"}}) {
    SCOPED_TRACE(std::string(c.model) + " " + c.features + " " + c.decoder);
    TrainOptions o = Options(c.model);
    o.node_features = c.features;
    o.link_decoder = c.decoder;
    if (o.node_features != "one-hot") o.sparse_lr = 0.1f;
    TrainSummary s;
    ASSERT_OK(Train(o, &s));
    EXPECT_GT(s.test_mrr, 0.10) << s.test_hits10;
    EXPECT_GT(s.test_hits10, 0.25);
    ASSERT_EQ(s.history.size(), 20u);
    EXPECT_LT(s.history.back().loss, s.history.front().loss);
  }
}

TEST_F(LinkGnnTrainerTest, SampledSoftmaxRaisesTheNegativesLogits) {
  // The first step scores the same rows either way; sampled_softmax adds
  // log(120 entities / 30 negatives) to every negative's logit, which
  // raises each query's loss by more than 0 and less than log 4.
  TrainOptions o = Options("sage");
  o.epochs = 1;
  const std::vector<double> plain = StepLosses(o);
  o.sampled_softmax = true;
  const std::vector<double> sampled = StepLosses(o);
  ASSERT_FALSE(plain.empty());
  ASSERT_FALSE(sampled.empty());
  EXPECT_GT(sampled[0], plain[0] + 1e-3);
  EXPECT_LT(sampled[0], plain[0] + std::log(4.0));
}

TEST_F(LinkGnnTrainerTest, DenseOptimizerAndLrTrainTheEncoder) {
  // --optimizer / --lr are the encoder's (refused for the shallow models):
  // another optimizer or rate gives another trajectory.
  TrainOptions o = Options("gcn");
  o.epochs = 1;
  const std::vector<double> adam = StepLosses(o);
  o.optimizer = "sgd";
  o.lr = 0.5f;
  const std::vector<double> sgd = StepLosses(o);
  ASSERT_EQ(adam.size(), sgd.size());
  ASSERT_GT(adam.size(), 1u);
  EXPECT_EQ(adam[0], sgd[0]);
  EXPECT_NE(adam.back(), sgd.back());
}

TEST_F(LinkGnnTrainerTest, SparseOptimizerTrainsDistMultRelationRows) {
  // DistMult's relation rows train with --sparse-optimizer / --sparse-lr,
  // as the shallow models' rows do (one-hot input: no other rows use them):
  // another sparse rate gives another trajectory with distmult and the same
  // one with dot, which has no relation rows; the dense --lr still moves
  // only the encoder (the first step's loss is the same either way).
  TrainOptions o = Options("sage");
  o.epochs = 1;
  o.link_decoder = "distmult";
  const std::vector<double> base = StepLosses(o);
  o.sparse_lr = 0.5f;
  const std::vector<double> faster = StepLosses(o);
  ASSERT_EQ(base.size(), faster.size());
  ASSERT_GT(base.size(), 1u);
  EXPECT_EQ(base[0], faster[0]);
  EXPECT_NE(base.back(), faster.back());
  o.sparse_optimizer = "sgd";
  EXPECT_NE(StepLosses(o).back(), faster.back());
  o = Options("sage");
  o.epochs = 1;
  const std::vector<double> dot = StepLosses(o);
  o.sparse_lr = 0.5f;
  EXPECT_EQ(StepLosses(o), dot);
}

TEST_F(LinkGnnTrainerTest, DegreeFeaturesAndLogisticLossTrain) {
  TrainOptions o = Options("sage");
  o.node_features = "degree";
  o.loss = "logistic";
  o.epochs = 5;
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  EXPECT_LT(s.history.back().loss, s.history.front().loss);
}

TEST_F(LinkGnnTrainerTest, SameLossesForAnyThreadCount) {
  TrainOptions o = Options("sage");
  o.epochs = 3;
  o.dropout = 0.3f;  // dropout draws from the step's key, not the thread
  o.node_features = "learned:8";
  const std::vector<double> one = StepLosses(o);
  ASSERT_OK_AND_ASSIGN(Tensor train, storage::LoadNpy(dir_->File("graph/link_train.npy")));
  ASSERT_EQ(static_cast<int64_t>(one.size()), 3 * ((train.size(0) + 63) / 64));
  o.threads = 2;
  EXPECT_EQ(StepLosses(o), one);
}

TEST_F(LinkGnnTrainerTest, MetricsFileHasRankingKeysAndFinalLine) {
  TrainOptions o = Options("sage");
  o.epochs = 2;
  o.eval_epochs = 1;
  o.metrics_file = dir_->File("gnn_metrics.jsonl");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  std::ifstream in(o.metrics_file);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 3u);
  for (const char* key : {"loss", "val_mrr", "val_hits10", "test_mrr", "test_hits1", "test_hits3", "test_hits10"}) {
    EXPECT_TRUE(lines[0].contains(key)) << key;
  }
  EXPECT_TRUE(lines[2].at("final").get<bool>());
  EXPECT_DOUBLE_EQ(lines[2].at("test_mrr").get<double>(), s.test_mrr);
}

TEST_F(LinkGnnTrainerTest, ExportWritesEveryNodesEmbedding) {
  TrainOptions o = Options("sage");
  o.epochs = 1;
  o.link_decoder = "distmult";
  o.export_dir = dir_->File("gnn_export");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  ASSERT_OK_AND_ASSIGN(Tensor e, storage::LoadNpy(o.export_dir + "/entity_embeddings.npy"));
  EXPECT_EQ(e.size(0), 120);
  EXPECT_EQ(e.size(1), 32);
  ASSERT_OK_AND_ASSIGN(Tensor r, storage::LoadNpy(o.export_dir + "/relation_embeddings.npy"));
  EXPECT_EQ(r.size(0), 1);
  ASSERT_OK_AND_ASSIGN(Tensor ids, storage::LoadNpy(o.export_dir + "/entity_ids.npy"));
  EXPECT_EQ(ids.numel(), 120);
}

TEST_F(LinkGnnTrainerTest, GraphHoldingAValidationEdgeIsRefused) {
  // A copy of the dataset whose first validation triple is the reverse of
  // a training edge: the undirected graph holds it, and it is no training
  // triple, so the encoder would see the edge it is ranked on.
  const std::string copy = dir_->File("leaky");
  std::filesystem::copy(dir_->File("graph"), copy);
  ASSERT_OK_AND_ASSIGN(Tensor train, storage::LoadNpy(copy + "/link_train.npy"));
  ASSERT_OK_AND_ASSIGN(Tensor val, storage::LoadNpy(copy + "/link_val.npy"));
  const int64_t* t = train.data<int64_t>();
  int64_t row = 0;
  while (t[3 * row] == t[3 * row + 2]) ++row;  // not a self loop
  int64_t* v = val.data<int64_t>();
  v[0] = t[3 * row + 2];
  v[1] = 0;
  v[2] = t[3 * row];
  ASSERT_OK(storage::SaveNpy(copy + "/link_val.npy", val));
  TrainOptions o = Options("sage");
  o.dataset = copy;
  TrainSummary s;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "graph holds the edge",
                        std::to_string(v[0]) + " -> " + std::to_string(v[2]), "link_val.npy row 0",
                        "preprocess --task link");
}

TEST_F(LinkGnnTrainerTest, OptionsAGnnEncoderDoesNotTakeAreRefused) {
  TrainSummary s;
  TrainOptions o = Options("sage");
  o.link_decoder = "transe";
  EXPECT_ERROR_CONTAINS(Train(o, &s), "decoder", "dot, distmult");
  o = Options("sage");
  o.fanouts = {10};
  EXPECT_ERROR_CONTAINS(Train(o, &s), "fanouts", "one per layer");
  o = Options("gcn");
  o.optimizer = "adagrad";
  EXPECT_ERROR_CONTAINS(Train(o, &s), "optimizer", "adam, adamw, sgd");
  o = Options("sage");
  o.eval_negatives = 10;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "eval_negatives", "every entity");
  o = Options("sage");
  o.reciprocal = true;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "reciprocal", "distmult");
  o = Options("sage");
  o.checkpoint_dir = dir_->File("ck");
  EXPECT_ERROR_CONTAINS(Train(o, &s), "checkpoint", "shallow");
  o = Options("sage");
  o.lr = 0.0f;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "lr", "positive");
  o = Options("sage");
  o.table_store = "disk";
  EXPECT_ERROR_CONTAINS(Train(o, &s), "table_store", "no entity table");
}

}  // namespace
}  // namespace foresight::trainer
