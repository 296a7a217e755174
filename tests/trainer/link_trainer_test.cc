// `train --task link` end to end on a small synthetic knowledge graph:
// the models learn it (filtered MRR far above chance), the metrics file has
// the documented keys and final line, the same seed gives the same per-step
// losses with 1 or 2 threads and with the entity table on the disk store
// behind a small lookahead (or LRU) cache, bit for bit; export writes the
// embeddings with their names; options link training does not support
// are refused by name.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/datasets/triples.h"
#include "foresight/storage/npy.h"
#include "foresight/trainer/trainer.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

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
    datasets::TriplesPreprocessOptions o;
    o.train = dir_->File("train.txt");
    o.val = dir_->File("valid.txt");
    o.test = dir_->File("test.txt");
    testing::WriteFile(o.train, train);
    testing::WriteFile(o.val, val);
    testing::WriteFile(o.test, test);
    o.output = dir_->File("kg");
    ASSERT_OK(datasets::PreprocessTriples(o, CpuContext()));
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
    o.lr = 0.05f;
    o.weight_decay = 0.0f;
    o.init_scale = 0.1f;
    o.eval_epochs = 10;
    o.progress = false;
    o.threads = 1;
    o.seed = 3;
    return o;
  }

  // Every step's loss.
  static std::vector<double> Losses(const TrainOptions& o) {
    std::vector<double> losses;
    TrainCallbacks cb;
    cb.on_batch = [&](int, int64_t, int64_t, double loss) { losses.push_back(loss); };
    TrainSummary s;
    const Status st = Train(o, cb, &s);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return losses;
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
  const std::vector<double> one = Losses(o);
  o.threads = 2;
  EXPECT_EQ(Losses(o), one);
}

TEST_F(LinkTrainerTest, DiskStoreBehindSmallCacheEqualsMemoryBitForBit) {
  for (int threads : {1, 2}) {
    TrainOptions o = Options("distmult");
    o.epochs = 3;
    o.threads = threads;
    o.negative_sampling = "degree";
    const std::vector<double> memory = Losses(o);
    ASSERT_FALSE(memory.empty());
    o.table_store = "disk";
    o.lookahead = 4;
    // Room for a fraction of the 60 rows: positives and negatives of a batch
    // are mostly bypass rows, and rows move between cache and disk.
    const int64_t row_bytes = (16 + 2 * 16) * 4;  // dim floats + Adam's two moments
    o.cache_size = 12 * row_bytes;
    EXPECT_EQ(Losses(o), memory) << "lookahead cache, " << threads << " threads";
    o.cache_policy = "lru";
    EXPECT_EQ(Losses(o), memory) << "lru cache, " << threads << " threads";
    o.cache_size = 0;
    EXPECT_EQ(Losses(o), memory) << "no cache, " << threads << " threads";
  }
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
  o.checkpoint_dir = dir_->File("ck");
  testing::ExpectErrorContains(o.Validate(), "checkpoint", {"checkpoint"});
  o = Options("complex");
  o.embedding_dim = 15;
  testing::ExpectErrorContains(o.Validate(), "odd dim", {"embedding_dim", "even"});
  o = Options("distmult");
  o.cache_size = 1024;
  testing::ExpectErrorContains(o.Validate(), "memory cache", {"cache_size", "table_store disk"});
  o = Options("distmult");
  o.dataset = dir_->File("absent");
  TrainSummary s;
  testing::ExpectErrorContains(Train(o, &s), "absent", {"absent"});
}

}  // namespace
}  // namespace foresight::trainer
