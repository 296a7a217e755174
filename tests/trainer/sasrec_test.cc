// `train --model sasrec` end to end on a small synthetic log where each
// user walks through the items in order (item k is mostly followed by
// k + 1): SASRec learns it and ranks the held-out item far above a
// popularity ranker; the metrics file has the documented keys and a final
// line; the item table on the disk store behind a small lookahead cache
// trains to the same losses bit for bit; options sasrec does not use are
// refused by name.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/datasets/sequences.h"
#include "foresight/storage/sequences_dataset.h"
#include "foresight/trainer/trainer.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

constexpr int64_t kItems = 60;

class SasrecTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    uint64_t state = 2024;
    auto next = [&]() {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int64_t>(state >> 33);
    };
    std::string log;
    for (int64_t u = 1; u <= 300; ++u) {
      const int64_t len = 6 + next() % 9;
      int64_t item = next() % kItems;
      for (int64_t t = 0; t < len; ++t) {
        // One action in ten is a random item; the walk goes on from it.
        if (next() % 10 == 0) item = next() % kItems;
        log += std::to_string(u) + " " + std::to_string(100 + item) + "\n";
        item = (item + 1) % kItems;
      }
    }
    testing::WriteFile(dir_->File("log.txt"), log);
    datasets::SequencesPreprocessOptions o;
    o.input = dir_->File("log.txt");
    o.output = dir_->File("seq");
    ASSERT_OK(datasets::PreprocessSequences(o));
  }
  static void TearDownTestSuite() { delete dir_; }

  static TrainOptions Options() {
    TrainOptions o;
    o.dataset = dir_->File("seq");
    o.model = "sasrec";
    o.blocks = 2;
    o.heads = 2;
    o.hidden = 16;
    o.max_length = 10;
    o.dropout = 0.1f;
    o.lr = 0.01f;
    o.adam_beta2 = 0.98f;
    o.weight_decay = 0.0f;
    o.batch_size = 32;
    o.epochs = 12;
    o.eval_epochs = 4;
    o.threads = 2;
    o.seed = 1;
    o.progress = false;
    return o;
  }

  // Full-ranking HR@10 of a popularity ranker (training counts; the user's
  // other items left out, as the trainer does) on the test items.
  static double PopularityHr10() {
    auto ds = storage::SequencesDataset::Open(dir_->File("seq"));
    EXPECT_OK(ds.status());
    const auto& d = **ds;
    std::vector<int64_t> count(static_cast<size_t>(d.num_items() + 1), 0);
    for (int64_t u = 0; u < d.num_users(); ++u) {
      for (int64_t i = 0; i < d.train_length(u); ++i) ++count[static_cast<size_t>(d.items()[d.offsets()[u] + i])];
    }
    int64_t hits = 0, users = 0;
    for (int64_t u = 0; u < d.num_users(); ++u) {
      if (d.test(u) == 0) continue;
      ++users;
      std::vector<int32_t> seen(d.items() + d.offsets()[u], d.items() + d.offsets()[u + 1]);
      int64_t above = 0;
      for (int64_t j = 1; j <= d.num_items(); ++j) {
        if (j == d.test(u) || std::count(seen.begin(), seen.end(), j) > 0) continue;
        above += count[static_cast<size_t>(j)] >= count[static_cast<size_t>(d.test(u))] ? 1 : 0;
      }
      hits += above < 10 ? 1 : 0;
    }
    return static_cast<double>(hits) / static_cast<double>(users);
  }

  static std::vector<nlohmann::json> ReadLines(const std::string& path) {
    std::ifstream in(path);
    std::vector<nlohmann::json> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
    return lines;
  }

  static testing::TempDir* dir_;
};
testing::TempDir* SasrecTest::dir_ = nullptr;

TEST_F(SasrecTest, LearnsTheSequencesFarAbovePopularity) {
  TrainOptions o = Options();
  o.metrics_file = dir_->File("metrics.jsonl");
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  const std::vector<nlohmann::json> lines = ReadLines(o.metrics_file);
  ASSERT_EQ(lines.size(), 13u);
  for (const char* key : {"val_hr10", "val_ndcg10", "val_hr10_full", "val_ndcg10_full", "test_hr10", "test_ndcg10",
                          "test_hr10_full", "test_ndcg10_full", "eval_seconds"}) {
    EXPECT_TRUE(lines[3].contains(key)) << key;
    EXPECT_FALSE(lines[2].contains(key)) << key;  // epoch 3 is not an evaluation epoch
  }
  for (const char* key : {"epoch", "loss", "epoch_seconds", "epoch_cpu_seconds", "tokens_per_second"}) {
    EXPECT_TRUE(lines[2].contains(key)) << key;
  }
  EXPECT_LT(lines[11]["loss"].get<double>(), lines[0]["loss"].get<double>());
  const nlohmann::json& f = lines.back();
  ASSERT_TRUE(f["final"].get<bool>());
  for (const char* key : {"best_epoch", "test_hr10", "test_ndcg10", "test_hr10_full", "test_ndcg10_full"}) {
    EXPECT_TRUE(f.contains(key)) << key;
  }
  const double popularity = PopularityHr10();
  // Random ranking gives HR@10 ~ 10/101 against 100 negatives.
  EXPECT_GT(f["test_hr10"].get<double>(), 0.6) << f.dump();
  EXPECT_GT(f["test_hr10_full"].get<double>(), popularity + 0.3) << f.dump() << " popularity " << popularity;
  EXPECT_GT(f["test_ndcg10"].get<double>(), 0.3) << f.dump();
  EXPECT_EQ(s.best_epoch, f["best_epoch"].get<int>());
  EXPECT_DOUBLE_EQ(s.test_hr10, f["test_hr10"].get<double>());
}

TEST_F(SasrecTest, DiskTableBehindASmallCacheTrainsTheSameBits) {
  TrainOptions o = Options();
  o.epochs = 2;
  o.eval_epochs = 2;
  TrainSummary memory, disk;
  ASSERT_OK(Train(o, &memory));
  o.table_store = "disk";
  o.table_dir = dir_->path();
  o.cache_size = 4096;  // about a third of the 61 rows (16 floats and Adam state: 192 bytes)
  o.lookahead = 4;
  o.threads = 1;
  ASSERT_OK(Train(o, &disk));
  ASSERT_EQ(memory.history.size(), disk.history.size());
  for (size_t e = 0; e < memory.history.size(); ++e) EXPECT_EQ(memory.history[e].loss, disk.history[e].loss) << e;
  EXPECT_EQ(memory.test_hr10, disk.test_hr10);
  EXPECT_EQ(memory.test_ndcg10, disk.test_ndcg10);
}

TEST_F(SasrecTest, RefusesOptionsItDoesNotUse) {
  TrainOptions o = Options();
  o.layers = 3;
  EXPECT_ERROR_CONTAINS(o.Validate(), "layers: does not apply to sasrec");
  o = Options();
  o.heads = 3;
  EXPECT_ERROR_CONTAINS(o.Validate(), "heads: must be >= 1 and divide hidden (16), got 3");
  o = Options();
  o.checkpoint_dir = dir_->File("ckpt");
  EXPECT_ERROR_CONTAINS(o.Validate(), "sasrec does not write checkpoints yet");
  o = Options();
  o.adam_beta2 = 1.0f;
  EXPECT_ERROR_CONTAINS(o.Validate(), "adam_beta2: must be in (0, 1)");
  o = Options();
  o.hot_fraction = 0.5f;  // the static hot tier is the GNN feature cache's
  EXPECT_ERROR_CONTAINS(o.Validate(), "hot_fraction: applies to the GNN feature cache of task node, not to sasrec");
  o = Options();
  o.read_gap = 4096;  // the GNN feature store's read settings
  EXPECT_ERROR_CONTAINS(o.Validate(), "read_gap: applies to the GNN feature store of task node, not to sasrec");
}

}  // namespace
}  // namespace foresight::trainer
