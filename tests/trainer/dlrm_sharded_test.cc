// DLRM on several ranks with sharded tables: under `mpirun -np N`
// (tests/trainer/CMakeLists.txt: 2 and 3 ranks, shared memory and TCP)
// every rank trains the one-rank reference by itself (the single-process
// communicator), then the same options across the N ranks, row-wise and
// table-wise, on the memory store and on the disk store behind a small
// cache, and compares: per-step losses within 1e-5 relative for the first
// 50 steps, best validation and test AUC within 0.002. The training split
// (8002 samples) leaves a last batch of two samples, so at 3 ranks one
// rank gets an empty part of it. Then checkpoints: every rank saves its
// shard, export joins the shards into the one-rank run's tables, a run
// resumed on the same ranks equals the uninterrupted one bit for bit, and
// a resume on another rank count is refused. Run as one
// process (the discovered test) the world path is the one-rank path.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "foresight/core/communicator.h"
#include "foresight/core/thread_pool.h"
#include "foresight/datasets/clicks.h"
#include "foresight/kernels/ops.h"
#include "foresight/trainer/inference.h"
#include "foresight/trainer/trainer.h"
#include "sharded_test_util.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

class DlrmShardedTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    datasets::GenerateClicksOptions g;
    g.output = dir_->File("clicks");
    g.num_tables = 5;
    g.rows = 300;
    g.dim = 8;
    g.num_samples = 10003;  // 8002 training samples
    g.bag_sizes = {1, 2, 1, 3, 1};  // multi-hot bags: row-wise owners pool partial sums
    g.zipf = 1.05;
    g.seed = 3;
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
    o.batch_size = 100;  // 80 full batches and one of two samples
    o.epochs = 2;
    o.eval_every = 40;
    o.eval_batch_size = 200;
    o.lr = 0.01f;
    o.weight_decay = 0;
    o.dropout = 0;  // DropoutMasksFollowTheGlobalBatch turns it on
    // SGD: unlike Adagrad and Adam, its update scales with the gradient, so
    // a wrong weighting of a rank's part shows in the losses.
    o.sparse_optimizer = "sgd";
    o.sparse_lr = 0.5f;
    o.seed = 11;
    o.threads = 1;
    o.progress = false;
    o.table_dir = dir_->path();
    return o;
  }

  static testing::TempDir* dir_;
};

testing::TempDir* DlrmShardedTest::dir_ = nullptr;

// The bar: a run on several ranks trained without error, its first
// 50 per-step losses within 1e-5 relative of one rank's, its test AUC within
// 0.002.
void ExpectTheStepsOfOneRank(const TrainedRun& parallel, const TrainedRun& reference, const std::string& what) {
  ASSERT_TRUE(parallel.status.ok()) << what << ": " << parallel.status.ToString();
  ASSERT_EQ(parallel.losses.size(), reference.losses.size()) << what;
  testing::ExpectLossesNear(parallel.losses, reference.losses, 50, what);
  EXPECT_NEAR(parallel.summary.test_auc, reference.summary.test_auc, 0.002) << what;
}

TEST_F(DlrmShardedTest, RanksTrainTheModelOfOneRank) {
  StatusOr<Communicator*> world = WorldCommunicator();
  ASSERT_OK(world.status());
  std::unique_ptr<Communicator> single = MakeSingleProcessCommunicator();
  const TrainedRun reference = TrainOn(Base(), single.get());
  ASSERT_OK(reference.status);
  ASSERT_GE(reference.losses.size(), 50u);
  for (const char* sharding : {"row", "table"}) {
    for (const char* store : {"memory", "disk"}) {
      TrainOptions o = Base();
      o.sharding = sharding;
      o.table_store = store;
      if (std::string(store) == "disk") {
        kernels::EmbeddingRowLayout layout;
        layout.dim = o.embedding_dim;
        layout.optimizer = kernels::SparseOptimizer::kSgd;
        o.cache_size = 5 * 300 * layout.row_bytes() / 10;  // a tenth of the rows
        o.lookahead = 4;
      }
      const std::string what = std::string(sharding) + "-wise on " + store + ", " +
                               std::to_string((*world)->size()) + " ranks";
      const TrainedRun parallel = TrainOn(o, *world);
      ASSERT_NO_FATAL_FAILURE(ExpectTheStepsOfOneRank(parallel, reference, what));
      EXPECT_NEAR(parallel.summary.best_val_auc, reference.summary.best_val_auc, 0.002) << what;
      EXPECT_EQ(parallel.summary.best_epoch, reference.summary.best_epoch) << what;
      double worst = 0;
      for (size_t i = 0; i < 50; ++i) {
        worst = std::max(worst, std::abs(parallel.losses[i] - reference.losses[i]) / std::abs(reference.losses[i]));
      }
      std::printf("%s: largest relative loss difference in 50 steps %.3g; test AUC %.5f vs %.5f\n", what.c_str(),
                  worst, parallel.summary.test_auc, reference.summary.test_auc);
    }
  }
}

// The dense gradients summed in buckets from backward's hooks (64 bytes:
// smaller than every weight matrix) and in one exchange after backward
// (--allreduce-bucket 0), against one rank. The last batch of two samples
// leaves a rank of three with nothing to backward: it starts its buckets
// before the tables' all-to-all all the same.
TEST_F(DlrmShardedTest, BucketedDenseSumsTrainTheModelOfOneRank) {
  StatusOr<Communicator*> world = WorldCommunicator();
  ASSERT_OK(world.status());
  std::unique_ptr<Communicator> single = MakeSingleProcessCommunicator();
  const TrainedRun reference = TrainOn(Base(), single.get());
  ASSERT_OK(reference.status);
  ASSERT_GE(reference.losses.size(), 50u);
  for (int64_t bucket : {int64_t{0}, int64_t{64}}) {
    TrainOptions o = Base();
    o.sharding = "row";
    o.allreduce_bucket = bucket;
    const std::string what = "bucket " + std::to_string(bucket) + " bytes, " + std::to_string((*world)->size()) +
                             " ranks";
    ASSERT_NO_FATAL_FAILURE(ExpectTheStepsOfOneRank(TrainOn(o, *world), reference, what));
  }
}

TEST_F(DlrmShardedTest, ShardCheckpointsResumeOnTheSameRanks) {
  StatusOr<Communicator*> world = WorldCommunicator();
  ASSERT_OK(world.status());
  const int ranks = (*world)->size();
  SharedDir shared(*world);
  TrainOptions o = Base();
  o.table_store = "disk";
  o.cache_size = 64 << 10;
  o.lookahead = 4;
  o.checkpoint_dir = shared.File("full");
  const TrainedRun full = TrainOn(o, *world);
  ASSERT_OK(full.status);
  if ((*world)->rank() == 0) {
    // export joins the shards into whole tables: the one-rank run's.
    TrainOptions one = o;
    one.checkpoint_dir = shared.File("single");
    std::unique_ptr<Communicator> single = MakeSingleProcessCommunicator();
    ASSERT_OK(TrainOn(one, single.get()).status);
    InferenceOptions io;
    io.dataset = o.dataset;
    io.checkpoint_dir = o.checkpoint_dir;
    ASSERT_OK(Export(io, shared.File("export_full")));
    io.checkpoint_dir = one.checkpoint_dir;
    ASSERT_OK(Export(io, shared.File("export_single")));
    for (int k = 0; k < 5; ++k) {
      ExpectExportedLikeOneRank(shared.File("export_single"), shared.File("export_full"),
                                "table_" + std::to_string(k) + ".npy", 1e-6, ranks);
    }
  }

  o.checkpoint_dir.clear();
  ExpectShardsResumeOnTheSameRanks(o, full, /*first_epochs=*/1, *world, shared,
                                   [](const TrainSummary& resumed, const TrainSummary& uninterrupted) {
                                     EXPECT_EQ(resumed.best_val_auc, uninterrupted.best_val_auc);
                                     EXPECT_EQ(resumed.test_auc, uninterrupted.test_auc);
                                     EXPECT_EQ(resumed.test_logloss, uninterrupted.test_logloss);
                                   });
}

// Dropout on both MLPs: a rank's part of the batch keys its masks by the
// samples' rows in the global batch, so every rank count takes the one-rank
// steps. The masks must matter: the losses differ from those without.
TEST_F(DlrmShardedTest, DropoutMasksFollowTheGlobalBatch) {
  StatusOr<Communicator*> world = WorldCommunicator();
  ASSERT_OK(world.status());
  std::unique_ptr<Communicator> single = MakeSingleProcessCommunicator();
  TrainOptions o = Base();
  const TrainedRun without = TrainOn(o, single.get());
  o.dropout = 0.2f;
  const TrainedRun reference = TrainOn(o, single.get());
  ASSERT_OK(reference.status);
  ASSERT_GE(reference.losses.size(), 50u);
  ASSERT_EQ(without.losses.size(), reference.losses.size());
  EXPECT_NE(without.losses[1], reference.losses[1]) << "dropout changed nothing";
  for (const char* store : {"memory", "disk"}) {
    o.table_store = store;
    const std::string what =
        std::string("dropout 0.2 on ") + store + ", " + std::to_string((*world)->size()) + " ranks";
    ASSERT_NO_FATAL_FAILURE(ExpectTheStepsOfOneRank(TrainOn(o, *world), reference, what));
  }
}

}  // namespace
}  // namespace foresight::trainer
