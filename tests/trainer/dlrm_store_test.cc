// DLRM's tables on every store behind the lookahead cache train exactly as
// in memory: per-step losses and the final metrics bit for bit, for disk
// (O_DIRECT) and RocksDB behind a cache of 5% of the table bytes, each cache
// policy, 1 and 2 threads; and behind a cache of a few rows, where batches
// bypass the cache (their rows written back at release), evicted dirty rows
// are written back, and the final flush leaves the store current.
#include <cmath>
#include <string>
#include <vector>

#include "foresight/core/thread_pool.h"
#include "foresight/datasets/clicks.h"
#include "foresight/kernels/ops.h"
#include "foresight/trainer/trainer.h"
#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

struct TrainingRun {
  std::vector<double> losses;  // every step's loss, in order
  TrainSummary summary;
  std::vector<nlohmann::json> lines;
};

class DlrmStoreTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    datasets::GenerateClicksOptions g;
    g.output = dir_->File("clicks");
    g.num_tables = 4;
    g.rows = 1500;
    g.dim = 8;
    g.num_samples = 3000;
    g.bag_sizes = {1, 2, 1, 3};  // multi-hot bags: repeated rows within a batch
    g.zipf = 1.05;
    g.seed = 2;
    ThreadPool pool(1);
    ASSERT_OK(datasets::GenerateClicks(g, CpuContext(0, &pool)));
  }
  static void TearDownTestSuite() { delete dir_; }

  static TrainOptions Base() {
    TrainOptions o;
    o.dataset = dir_->File("clicks");
    o.model = "dlrm";
    o.bottom_mlp = {16, 8};
    o.top_mlp = {16, 1};
    o.embedding_dim = 8;
    o.batch_size = 64;
    o.epochs = 2;
    o.eval_every = 15;
    o.eval_batch_size = 100;
    o.lr = 0.003f;
    o.weight_decay = 0;
    o.dropout = 0.1f;
    o.sparse_optimizer = "rowwise-adagrad";
    o.sparse_lr = 0.05f;
    o.seed = 7;
    o.threads = 1;
    o.progress = false;
    o.table_dir = dir_->path();
    return o;
  }

  // Bytes of every table row (embedding + optimizer state) of Base().
  static int64_t TableBytes(const TrainOptions& o) {
    kernels::EmbeddingRowLayout layout;
    layout.dim = o.embedding_dim;
    layout.optimizer = *kernels::ParseSparseOptimizer(o.sparse_optimizer);
    return 4 * 1500 * layout.row_bytes();
  }

  static TrainingRun Train(TrainOptions o) {
    TrainingRun r;
    TrainCallbacks cb;
    cb.on_batch = [&](int, int64_t, int64_t, double loss) { r.losses.push_back(loss); };
    o.metrics_file = dir_->File("m.jsonl");
    const Status s = trainer::Train(o, cb, &r.summary);
    EXPECT_TRUE(s.ok()) << o.table_store << " " << o.cache_policy << ": " << s.ToString();
    r.lines = testing::ReadJsonLines(o.metrics_file);
    return r;
  }

  static void ExpectSame(const TrainingRun& want, const TrainingRun& got, const std::string& what) {
    ASSERT_EQ(want.losses.size(), got.losses.size()) << what;
    for (size_t i = 0; i < want.losses.size(); ++i) ASSERT_EQ(want.losses[i], got.losses[i]) << what << " step " << i;
    EXPECT_EQ(want.summary.best_val_auc, got.summary.best_val_auc) << what;
    EXPECT_EQ(want.summary.test_auc, got.summary.test_auc) << what;
    EXPECT_EQ(want.summary.test_logloss, got.summary.test_logloss) << what;
    ASSERT_EQ(want.lines.size(), got.lines.size()) << what;
    for (size_t i = 0; i < want.lines.size(); ++i) {
      for (const char* k : {"loss", "val_auc", "val_logloss", "test_auc", "test_logloss"}) {
        EXPECT_EQ(want.lines[i].value(k, -1.0), got.lines[i].value(k, -1.0)) << what << " line " << i << " " << k;
      }
    }
  }

  static testing::TempDir* dir_;
};

testing::TempDir* DlrmStoreTest::dir_ = nullptr;

TEST_F(DlrmStoreTest, DiskAndRocksDbBehindAFivePercentCacheEqualMemory) {
  const TrainingRun memory = Train(Base());
  ASSERT_GT(memory.losses.size(), 50u);
  for (const char* store : {"disk", "rocksdb"}) {
    for (const char* policy : {"lookahead", "lru", "static"}) {
      for (int threads : {1, 2}) {
        TrainOptions o = Base();
        o.table_store = store;
        o.cache_policy = policy;
        o.cache_size = TableBytes(o) / 20;
        o.lookahead = 8;
        o.threads = threads;
        const TrainingRun r = Train(o);
        const std::string what = std::string(store) + " " + policy + " threads " + std::to_string(threads);
        ExpectSame(memory, r, what);
        int64_t hits = 0, bytes_read = 0;
        for (size_t i = 0; i + 1 < r.lines.size(); ++i) {
          hits += r.lines[i]["cache_hits"].get<int64_t>();
          bytes_read += r.lines[i]["bytes_read"].get<int64_t>();
        }
        EXPECT_GT(hits, 0) << what;
        EXPECT_GT(bytes_read, 0) << what;
      }
    }
  }
}

// A cache of 3 rows: nearly every row of every batch bypasses it (written
// back at release), the slots' dirty rows are written back when evicted,
// and the final flush writes the rest; Adam's moments travel with the rows.
TEST_F(DlrmStoreTest, ACacheOfAFewRowsHitsEveryRuleAndStillEqualsMemory) {
  TrainOptions base = Base();
  base.sparse_optimizer = "adam";
  base.sparse_lr = 0.01f;
  const TrainingRun memory = Train(base);
  for (const char* store : {"disk", "rocksdb", "mmap", "memory"}) {
    for (const char* policy : {"lookahead", "lru"}) {
      TrainOptions o = base;
      o.table_store = store;
      o.cache_policy = policy;
      kernels::EmbeddingRowLayout layout;
      layout.dim = o.embedding_dim;
      layout.optimizer = kernels::SparseOptimizer::kAdam;
      o.cache_size = 3 * layout.row_bytes();
      o.lookahead = 2;
      const TrainingRun r = Train(o);
      const std::string what = std::string(store) + " " + policy + " with 3 slots";
      ExpectSame(memory, r, what);
      int64_t bypassed = 0, written_back = 0;
      for (size_t i = 0; i + 1 < r.lines.size(); ++i) {
        bypassed += r.lines[i]["rows_bypassed"].get<int64_t>();
        written_back += r.lines[i]["rows_written_back"].get<int64_t>();
      }
      EXPECT_GT(bypassed, 1000) << what;
      // LRU evicts hot dirty rows; lookahead keeps the three rows every
      // batch uses and evicts none of them.
      if (std::string(policy) == "lru") {
        EXPECT_GT(written_back, 0) << what;
      }
    }
  }
}

// SGD rows of dim 8 (32 bytes) tile the disk store's 4 KiB blocks: misses
// bring their blocks' companions (lookahead), a dirty row's eviction writes
// its block's other dirty rows with it, and a write-back fills its block
// with rows never written; none of it may change a bit.
TEST_F(DlrmStoreTest, RowsThatTileDiskBlocksEqualMemory) {
  TrainOptions base = Base();
  base.sparse_optimizer = "sgd";
  const TrainingRun memory = Train(base);
  for (const char* policy : {"lookahead", "lru"}) {
    for (const char* companions : {"on", "off"}) {
      TrainOptions o = base;
      o.table_store = "disk";
      o.cache_policy = policy;
      o.cache_size = TableBytes(o) / 20;
      o.lookahead = 8;
      o.threads = 2;
      o.page_companions = companions;
      const TrainingRun r = Train(o);
      ExpectSame(memory, r, std::string("disk ") + policy + " companions " + companions);
    }
  }
}

}  // namespace
}  // namespace foresight::trainer
