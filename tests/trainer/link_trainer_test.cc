// `train --task link` end to end on a small synthetic knowledge graph:
// the models learn it (filtered MRR far above chance), the metrics file has
// the documented keys and final line, the same seed gives the same per-step
// losses with 1 or 2 threads and with the entity table on the disk store
// behind a small lookahead (or LRU) cache, bit for bit; export writes the
// embeddings with their names; options link training does not support
// are refused by name.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/datasets/triples.h"
#include "foresight/storage/npy.h"
#include "foresight/trainer/trainer.h"
#include "testing/cli.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

using foresight::testing::StepLosses;

// 60 entities in 6 clusters of 10; relation "near" joins members of a
// cluster, "far" an entity to one 3 clusters on. Splits are disjoint.
class LinkTrainerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    std::string train, val, test;
    uint64_t state = 12345;
    auto next = [&]() {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int64_t>(state >> 33);
    };
    int64_t k = 0;
    for (int64_t e = 0; e < 60; ++e) {
      for (int rep = 0; rep < 4; ++rep) {
        const int64_t c = e / 10;
        const int64_t near = c * 10 + next() % 10;
        const int64_t far = ((c + 3) % 6) * 10 + next() % 10;
        const std::string a = "e" + std::to_string(e) + " near e" + std::to_string(near) + "\n";
        const std::string b = "e" + std::to_string(e) + " far e" + std::to_string(far) + "\n";
        std::string& to = (k % 10 == 8) ? val : (k % 10 == 9) ? test : train;
        to += a;
        to += b;
        ++k;
      }
    }
    ASSERT_OK(testing::PreprocessTriplesInto(*dir_, "kg", train, val, test));
  }
  static void TearDownTestSuite() { delete dir_; }

  static TrainOptions Options(const std::string& model) {
    TrainOptions o;
    o.dataset = dir_->File("kg");
    o.task = "link";
    o.model = model;
    o.embedding_dim = 16;
    o.negatives = 20;
    o.batch_size = 64;
    o.negative_chunk = 32;
    o.epochs = 30;
    o.sparse_optimizer = "adam";
    o.sparse_lr = 0.05f;
    o.weight_decay = 0.0f;
    o.init_scale = 0.1f;
    o.eval_epochs = 10;
    o.progress = false;
    o.threads = 1;
    o.seed = 3;
    return o;
  }


  static testing::TempDir* dir_;
};
testing::TempDir* LinkTrainerTest::dir_ = nullptr;

TEST_F(LinkTrainerTest, ModelsLearnTheClusters) {
  // Chance is an MRR of about 0.08 and Hits@10 of 0.17 (60 candidates); a
  // model that learned the clusters ranks the true entity among its 10
  // cluster members. dot ignores the relation, so it cannot tell "near"
  // from "far" and stays lower.
  const struct {
    const char* model;
    double mrr, hits10;
  } cases[] = {{"distmult", 0.2, 0.6}, {"complex", 0.2, 0.6}, {"transe", 0.15, 0.4}, {"dot", 0.12, 0.4}};
  for (const auto& c : cases) {
    TrainOptions o = Options(c.model);
    TrainSummary s;
    ASSERT_OK(Train(o, &s));
    EXPECT_GT(s.test_mrr, c.mrr) << c.model;
    EXPECT_GT(s.test_hits10, c.hits10) << c.model;
    EXPECT_GE(s.best_epoch, 10) << c.model;
  }
}

TEST_F(LinkTrainerTest, ReciprocalRelationsTrainAndExportBothRows) {
  TrainOptions o = Options("distmult");
  o.reciprocal = true;
  o.export_dir = dir_->File("export-reciprocal");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  EXPECT_GT(s.test_mrr, 0.2);
  ASSERT_OK_AND_ASSIGN(Tensor rel, storage::LoadNpy(o.export_dir + "/relation_embeddings.npy"));
  EXPECT_EQ(rel.shape(), (Shape{4, 16}));  // near, far, then their reverse rows
}

TEST_F(LinkTrainerTest, LogisticLossDegreeNegativesAndRegularizersTrain) {
  TrainOptions o = Options("distmult");
  o.loss = "logistic";
  o.negative_sampling = "degree";
  o.regularizer = "l3";
  o.regularization_weight = 1e-3f;
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  EXPECT_GT(s.test_mrr, 0.2);
  o = Options("complex");
  o.regularizer = "l2";
  o.regularization_weight = 1e-3f;
  ASSERT_OK(Train(o, &s));
  EXPECT_GT(s.test_mrr, 0.2);
}

TEST_F(LinkTrainerTest, SparseOptimizerAndSparseLrChooseTheRowUpdate) {
  // The shared --sparse-optimizer / --sparse-lr (as learned features and
  // DLRM tables) pick the rows' update: each kind and rate gives its own
  // losses, and row-wise Adagrad learns the clusters too.
  TrainOptions o = Options("distmult");
  o.epochs = 2;
  const std::vector<double> adam = StepLosses(o);
  o.sparse_lr = 0.02f;
  const std::vector<double> slower = StepLosses(o);
  o.sparse_optimizer = "sgd";
  o.sparse_lr = 0.5f;
  const std::vector<double> sgd = StepLosses(o);
  ASSERT_EQ(adam.size(), slower.size());
  EXPECT_NE(adam.back(), slower.back());
  EXPECT_NE(adam.back(), sgd.back());
  o = Options("distmult");
  o.sparse_optimizer = "rowwise-adagrad";
  o.sparse_lr = 0.5f;
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  EXPECT_GT(s.test_mrr, 0.2);
}

TEST_F(LinkTrainerTest, SampledSoftmaxWeighsEachNegativeAsEntitiesOverNegatives) {
  // At initialisation every score is about 0, so the first step's softmax
  // loss is about log(1 + negatives) (here log 21); with sampled_softmax
  // each negative counts 60 / 20 times: log(1 + 60) = log 61. (A negative
  // equal to the true entity is masked: a third of one per query.)
  TrainOptions o = Options("distmult");
  o.epochs = 1;
  o.init_scale = 0.01f;
  const std::vector<double> plain = StepLosses(o);
  o.sampled_softmax = true;
  const std::vector<double> sampled = StepLosses(o);
  ASSERT_FALSE(plain.empty());
  ASSERT_FALSE(sampled.empty());
  EXPECT_NEAR(plain[0], std::log(21.0), 0.05);
  EXPECT_NEAR(sampled[0], std::log(61.0), 0.05);
}

TEST_F(LinkTrainerTest, MetricsFileHasRankingKeysAndFinalLine) {
  TrainOptions o = Options("distmult");
  o.epochs = 4;
  o.eval_epochs = 2;
  o.metrics_file = dir_->File("metrics.jsonl");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  std::ifstream in(o.metrics_file);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_FALSE(lines[0].contains("val_mrr"));  // epoch 1 is not evaluated
  for (const char* key : {"val_mrr", "val_hits1", "val_hits3", "val_hits10", "test_mrr", "test_hits1", "test_hits3",
                          "test_hits10", "loss", "epoch_seconds"}) {
    EXPECT_TRUE(lines[1].contains(key)) << key;
  }
  const nlohmann::json& f = lines[4];
  EXPECT_EQ(f["final"], true);
  const int best = f["best_epoch"].get<int>();
  ASSERT_TRUE(best == 2 || best == 4);
  const nlohmann::json& at = lines[static_cast<size_t>(best - 1)];
  EXPECT_EQ(f["val_mrr"], at["val_mrr"]);
  EXPECT_EQ(f["test_mrr"], at["test_mrr"]);
  EXPECT_EQ(f["test_hits10"], at["test_hits10"]);
  EXPECT_DOUBLE_EQ(s.test_mrr, at["test_mrr"].get<double>());
}

TEST_F(LinkTrainerTest, SampledEvaluationCandidates) {
  // Ranking against 10 sampled entities instead of all 60: ranks can only
  // improve, and are the same for the same seed.
  TrainOptions o = Options("distmult");
  o.epochs = 10;
  TrainSummary all, sampled, again;
  ASSERT_OK(Train(o, &all));
  o.eval_negatives = 10;
  ASSERT_OK(Train(o, &sampled));
  ASSERT_OK(Train(o, &again));
  EXPECT_GE(sampled.test_mrr, all.test_mrr);
  EXPECT_GE(sampled.test_hits10, all.test_hits10);
  EXPECT_LE(sampled.test_mrr, 1.0);
  EXPECT_EQ(sampled.test_mrr, again.test_mrr);
}

TEST_F(LinkTrainerTest, SameLossesForAnyThreadCount) {
  TrainOptions o = Options("complex");
  o.epochs = 3;
  const std::vector<double> one = StepLosses(o);
  o.threads = 2;
  EXPECT_EQ(StepLosses(o), one);
}

TEST_F(LinkTrainerTest, DiskStoreBehindSmallCacheEqualsMemoryBitForBit) {
  for (int threads : {1, 2}) {
    TrainOptions o = Options("distmult");
    o.epochs = 3;
    o.threads = threads;
    o.negative_sampling = "degree";
    const std::vector<double> memory = StepLosses(o);
    ASSERT_FALSE(memory.empty());
    o.table_store = "disk";
    o.lookahead = 4;
    // Room for a fraction of the 60 rows: positives and negatives of a batch
    // are mostly bypass rows, and rows move between cache and disk.
    const int64_t row_bytes = (16 + 2 * 16) * 4;  // dim floats + Adam's two moments
    o.cache_size = 12 * row_bytes;
    EXPECT_EQ(StepLosses(o), memory) << "lookahead cache, " << threads << " threads";
    o.cache_policy = "lru";
    EXPECT_EQ(StepLosses(o), memory) << "lru cache, " << threads << " threads";
    o.cache_size = 0;
    EXPECT_EQ(StepLosses(o), memory) << "no cache, " << threads << " threads";
  }
}

// The metrics lines without their timings and cache counters (which differ
// between runs and stores).
std::vector<nlohmann::json> MetricsWithoutTimings(const std::string& path) {
  std::vector<nlohmann::json> lines = testing::ReadJsonLines(path);
  for (nlohmann::json& j : lines) {
    for (const char* key : {"epoch_seconds", "triples_per_second", "eval_seconds", "cache_hits", "cache_misses"}) {
      j.erase(key);
    }
  }
  return lines;
}

TEST_F(LinkTrainerTest, ResumedRunEqualsUninterruptedOne) {
  // 4 epochs straight, against 2 epochs with checkpoints then a resume to 4:
  // the same per-step losses, metrics lines, final line and embeddings, bit
  // for bit (Adam's moments and step count, the batch order and negatives
  // all carry over). Also with the entity table on the disk store behind a
  // small cache, for the first half, the resume, or both.
  TrainOptions o = Options("complex");
  o.epochs = 4;
  o.eval_epochs = 2;
  o.reciprocal = true;
  o.regularizer = "l3";
  o.regularization_weight = 1e-3f;
  o.metrics_file = dir_->File("straight.jsonl");
  o.export_dir = dir_->File("straight-emb");
  const std::vector<double> straight = StepLosses(o);
  ASSERT_OK_AND_ASSIGN(Tensor want, storage::LoadNpy(o.export_dir + "/entity_embeddings.npy"));
  const std::vector<nlohmann::json> want_lines = MetricsWithoutTimings(o.metrics_file);
  ASSERT_EQ(want_lines.size(), 5u);
  const int64_t row_bytes = (16 + 2 * 16) * 4;  // dim floats + Adam's two moments
  const struct {
    const char* first_store;
    const char* second_store;
  } cases[] = {{"memory", "memory"}, {"disk", "disk"}, {"memory", "disk"}, {"disk", "memory"}};
  int k = 0;
  for (const auto& c : cases) {
    TrainOptions r = o;
    r.checkpoint_dir = dir_->File("ck-" + std::to_string(k));
    r.metrics_file = dir_->File("resumed-" + std::to_string(k) + ".jsonl");
    r.export_dir = dir_->File("resumed-emb-" + std::to_string(k));
    ++k;
    auto set_store = [&](const char* store) {
      r.table_store = store;
      r.cache_size = r.table_store == "disk" ? 12 * row_bytes : 0;
      r.lookahead = 4;
    };
    set_store(c.first_store);
    r.epochs = 2;
    std::vector<double> losses = StepLosses(r);
    set_store(c.second_store);
    r.epochs = 4;
    r.resume = true;
    const std::vector<double> rest = StepLosses(r);
    losses.insert(losses.end(), rest.begin(), rest.end());
    EXPECT_EQ(losses, straight) << c.first_store << " then " << c.second_store;
    EXPECT_EQ(MetricsWithoutTimings(r.metrics_file), want_lines) << c.first_store << " then " << c.second_store;
    ASSERT_OK_AND_ASSIGN(Tensor got, storage::LoadNpy(r.export_dir + "/entity_embeddings.npy"));
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), want.nbytes()), 0)
        << c.first_store << " then " << c.second_store;
  }
}

TEST_F(LinkTrainerTest, ResumeChecksTheCheckpoint) {
  TrainOptions o = Options("distmult");
  o.epochs = 2;
  o.checkpoint_dir = dir_->File("ck-check");
  o.resume = true;
  TrainSummary s;
  ASSERT_OK(Train(o, &s));  // nothing to resume yet: starts from epoch 1
  EXPECT_EQ(s.epochs_completed, 2);
  EXPECT_EQ(s.history.size(), 2u);
  ASSERT_OK(Train(o, &s));  // finished: nothing to train, the same result
  EXPECT_EQ(s.epochs_completed, 2);
  EXPECT_TRUE(s.history.empty());
  o.sparse_lr = 0.01f;  // another trajectory
  testing::ExpectErrorContains(Train(o, &s), "changed sparse_lr", {"resume", "different training options"});
  o = Options("complex");
  o.checkpoint_dir = dir_->File("ck-check");
  o.resume = true;
  testing::ExpectErrorContains(Train(o, &s), "changed model", {"different training options"});
  o = Options("distmult");
  o.resume = true;
  testing::ExpectErrorContains(o.Validate(), "no directory", {"resume", "checkpoint directory"});
}

TEST_F(LinkTrainerTest, ExportWritesEmbeddingsWithNames) {
  TrainOptions o = Options("complex");
  o.epochs = 1;
  o.export_dir = dir_->File("export");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  ASSERT_OK_AND_ASSIGN(Tensor ent, storage::LoadNpy(o.export_dir + "/entity_embeddings.npy"));
  EXPECT_EQ(ent.shape(), (Shape{60, 16}));
  ASSERT_OK_AND_ASSIGN(Tensor rel, storage::LoadNpy(o.export_dir + "/relation_embeddings.npy"));
  EXPECT_EQ(rel.shape(), (Shape{2, 16}));
  ASSERT_OK_AND_ASSIGN(Tensor ids, storage::LoadNpy(o.export_dir + "/entity_ids.npy"));
  ASSERT_EQ(ids.size(0), 60);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(ids.data<uint8_t>()), 2), "e0");
  ASSERT_OK_AND_ASSIGN(Tensor names, storage::LoadNpy(o.export_dir + "/relation_names.npy"));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(names.data<uint8_t>()), 4), "near");
}

TEST_F(LinkTrainerTest, UnsupportedCombinationsAreRefusedByName) {
  TrainOptions o = Options("rgcn");
  testing::ExpectErrorContains(o.Validate(), "rgcn", {"model", "distmult", "sage"});
  o = Options("distmult");
  o.optimizer = "sgd";
  testing::ExpectErrorContains(o.Validate(), "dense optimizer", {"sparse_optimizer"});
  o = Options("distmult");
  o.lr = 0.5f;
  testing::ExpectErrorContains(o.Validate(), "dense lr", {"sparse_lr"});
  o = Options("distmult");
  o.sparse_optimizer = "adagrad";
  testing::ExpectErrorContains(o.Validate(), "unknown sparse optimizer", {"sparse_optimizer", "adagrad"});
  o = Options("distmult");
  o.loss = "logistic";
  o.sampled_softmax = true;
  testing::ExpectErrorContains(o.Validate(), "sampled softmax on logistic", {"sampled_softmax", "softmax"});
  o = Options("complex");
  o.embedding_dim = 15;
  testing::ExpectErrorContains(o.Validate(), "odd dim", {"embedding_dim", "even"});
  o = Options("distmult");
  o.cache_size = 1024;
  testing::ExpectErrorContains(o.Validate(), "memory cache", {"cache_size", "table_store disk"});
  // The static hot tier is the GNN feature cache's (task node).
  o = Options("distmult");
  o.table_store = "disk";
  o.hot_fraction = 0.5f;
  testing::ExpectErrorContains(o.Validate(), "hot tier", {"hot_fraction", "not to task link"});
  o = Options("sage");
  o.hot_fraction = 0.5f;
  testing::ExpectErrorContains(o.Validate(), "hot tier of an encoder", {"hot_fraction", "not to task link"});
  o = Options("sage");
  o.companion_span = 64 << 10;
  testing::ExpectErrorContains(o.Validate(), "companion span", {"companion_span", "not to task link"});
  o = Options("distmult");
  o.dataset = dir_->File("absent");
  TrainSummary s;
  testing::ExpectErrorContains(Train(o, &s), "absent", {"absent"});
}

}  // namespace
}  // namespace foresight::trainer
