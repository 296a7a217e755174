// The shallow link models on several ranks, their entity and relation rows
// split row-wise: under `mpirun -np N` (tests/trainer/CMakeLists.txt: 2 and
// 3 ranks, shared memory and TCP) every rank trains the one-rank reference
// by itself (the single-process communicator), then the same options across
// the N ranks, on the memory store (and DistMult on the disk store behind a
// small cache), and compares: per-step losses within 1e-5 relative for the first
// 50 steps, best validation and test MRR within 0.002. The training split
// (768 triples in batches of 50, chunks of 16) leaves a last batch of 18
// triples in two chunks, so at 3 ranks one rank gets an empty part of it.
// Then checkpoints: every rank saves its shards, a run resumed on the same
// ranks equals the uninterrupted one bit for bit, another rank count is
// refused; export gathers the rows from their owners. Run as one process
// (the discovered test) the world path is the one-rank path.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/communicator.h"
#include "foresight/datasets/triples.h"
#include "foresight/trainer/trainer.h"
#include "sharded_test_util.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

// 60 entities in 6 clusters of 10 and four relations (more relation rows
// than ranks: each rank owns some): "near" joins members of a cluster,
// "far" an entity to one 3 clusters on, "next" and "prev" to the adjacent
// clusters. 960 triples, 768 for training.
class LinkShardedTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    std::string train, val, test;
    uint64_t state = 777;
    auto next = [&]() {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int64_t>(state >> 33);
    };
    const char* names[] = {"near", "far", "next", "prev"};
    const int64_t shift[] = {0, 3, 1, 5};
    int64_t k = 0;
    for (int64_t e = 0; e < 60; ++e) {
      for (int rep = 0; rep < 4; ++rep) {
        for (int r = 0; r < 4; ++r) {
          const int64_t c = (e / 10 + shift[r]) % 6;
          const std::string line = "e" + std::to_string(e) + " " + names[r] + " e" +
                                   std::to_string(c * 10 + next() % 10) + "\n";
          std::string& to = (k % 10 == 8) ? val : (k % 10 == 9) ? test : train;
          to += line;
          ++k;
        }
      }
    }
    ASSERT_OK(testing::PreprocessTriplesInto(*dir_, "kg", train, val, test));
    // One relation: fewer relation rows than ranks.
    ASSERT_OK(testing::PreprocessTriplesInto(*dir_, "kg1", "e0 near e1\ne1 near e2\ne2 near e3\n", "e3 near e0\n",
                                             "e0 near e2\n"));
  }
  static void TearDownTestSuite() { delete dir_; }

  static TrainOptions Base(const std::string& model) {
    TrainOptions o;
    o.dataset = dir_->File("kg");
    o.task = "link";
    o.model = model;
    o.embedding_dim = 16;
    o.negatives = 12;
    o.batch_size = 50;  // 15 batches of 50 and one of 18 an epoch
    o.negative_chunk = 16;
    o.epochs = 4;       // 64 steps
    o.sparse_optimizer = "adam";
    o.sparse_lr = 0.05f;
    o.weight_decay = 0.0f;
    o.init_scale = 0.1f;
    o.eval_epochs = 2;
    o.progress = false;
    o.threads = 1;
    o.seed = 5;
    o.table_dir = dir_->path();
    return o;
  }
  static void OnDisk(TrainOptions* o) {
    o->table_store = "disk";
    o->cache_size = 8 << 10;  // a few rows of each rank's shard
    o->lookahead = 3;
  }

  static testing::TempDir* dir_;
};
testing::TempDir* LinkShardedTest::dir_ = nullptr;

// The bar: trained without error, the first 50 per-step losses
// within 1e-5 relative of one rank's, validation and test MRR within 0.002.
void ExpectTheStepsOfOneRank(const TrainedRun& parallel, const TrainedRun& reference, const std::string& what) {
  ASSERT_TRUE(parallel.status.ok()) << what << ": " << parallel.status.ToString();
  ASSERT_EQ(parallel.losses.size(), reference.losses.size()) << what;
  ASSERT_GE(reference.losses.size(), 50u) << what;
  const double worst = testing::ExpectLossesNear(parallel.losses, reference.losses, 50, what);
  EXPECT_NEAR(parallel.summary.best_val_mrr, reference.summary.best_val_mrr, 0.002) << what;
  EXPECT_NEAR(parallel.summary.test_mrr, reference.summary.test_mrr, 0.002) << what;
  EXPECT_NEAR(parallel.summary.test_hits10, reference.summary.test_hits10, 0.002) << what;
  std::printf("%s: largest relative loss difference in 50 steps %.3g; test MRR %.5f vs %.5f\n", what.c_str(), worst,
              parallel.summary.test_mrr, reference.summary.test_mrr);
}

TEST_F(LinkShardedTest, RanksTrainTheModelOfOneRank) {
  StatusOr<Communicator*> world = WorldCommunicator();
  ASSERT_OK(world.status());
  std::unique_ptr<Communicator> single = MakeSingleProcessCommunicator();
  // Every scorer; the disk store once (its rows and cache are per rank
  // either way, so the scorer does not change what it tests).
  const struct {
    const char* model;
    bool reciprocal;
    const char* loss;
    bool disk;
  } cases[] = {{"distmult", false, "softmax", true}, {"complex", true, "softmax", false},
               {"transe", false, "logistic", false}, {"dot", false, "softmax", false}};
  for (const auto& c : cases) {
    TrainOptions o = Base(c.model);
    o.reciprocal = c.reciprocal;
    o.loss = c.loss;
    if (std::string(c.model) == "complex") {
      o.regularizer = "l3";  // per-position terms of the part's rows
      o.regularization_weight = 0.01f;
    }
    const TrainedRun reference = TrainOn(o, single.get());
    ASSERT_OK(reference.status);
    // Something to compare: the loss falls (and the bilinear models, which
    // learn fastest, rank far above chance, an MRR of about 0.08).
    EXPECT_LT(reference.losses.back(), reference.losses.front()) << c.model;
    if (std::string(c.model) == "distmult" || std::string(c.model) == "complex") {
      EXPECT_GT(reference.summary.test_mrr, 0.15) << c.model;
    }
    for (const char* store : {"memory", "disk"}) {
      if (std::string(store) == "disk" && !c.disk) continue;
      TrainOptions on = o;
      if (std::string(store) == "disk") OnDisk(&on);
      const std::string what = std::string(c.model) + (c.reciprocal ? " reciprocal" : "") + " on " + store + ", " +
                               std::to_string((*world)->size()) + " ranks";
      ASSERT_NO_FATAL_FAILURE(ExpectTheStepsOfOneRank(TrainOn(on, *world), reference, what));
    }
  }
}

TEST_F(LinkShardedTest, ShardCheckpointsResumeOnTheSameRanksAndExportGathersTheRows) {
  StatusOr<Communicator*> world = WorldCommunicator();
  ASSERT_OK(world.status());
  const int ranks = (*world)->size();
  SharedDir shared(*world);
  TrainOptions o = Base("distmult");
  OnDisk(&o);
  o.checkpoint_dir = shared.File("full");
  o.export_dir = shared.File("export_full");
  const TrainedRun full = TrainOn(o, *world);
  ASSERT_OK(full.status);
  if ((*world)->rank() == 0) {
    // The export of several ranks' shards: the one-rank run's rows.
    TrainOptions one = o;
    one.checkpoint_dir = shared.File("single");
    one.export_dir = shared.File("export_single");
    std::unique_ptr<Communicator> single = MakeSingleProcessCommunicator();
    ASSERT_OK(TrainOn(one, single.get()).status);
    for (const char* name : {"entity_embeddings.npy", "relation_embeddings.npy", "entity_ids.npy"}) {
      ExpectExportedLikeOneRank(shared.File("export_single"), shared.File("export_full"), name, 1e-4, ranks);
    }
  }
  ASSERT_OK((*world)->Barrier());

  o.export_dir.clear();
  o.checkpoint_dir.clear();
  ExpectShardsResumeOnTheSameRanks(o, full, /*first_epochs=*/2, *world, shared,
                                   [](const TrainSummary& resumed, const TrainSummary& uninterrupted) {
                                     EXPECT_EQ(resumed.best_val_mrr, uninterrupted.best_val_mrr);
                                     EXPECT_EQ(resumed.test_mrr, uninterrupted.test_mrr);
                                     EXPECT_EQ(resumed.test_hits10, uninterrupted.test_hits10);
                                   });
}

TEST_F(LinkShardedTest, RefusesWhatRanksDoNotShard) {
  StatusOr<Communicator*> world = WorldCommunicator();
  ASSERT_OK(world.status());
  TrainOptions o = Base("distmult");
  o.sharding = "table";
  EXPECT_ERROR_CONTAINS(TrainOn(o, *world).status, "sharding", "row-wise");
  if ((*world)->size() == 1) return;
  o = Base("sage");  // a GNN encoder: its node table is not sharded
  EXPECT_ERROR_CONTAINS(TrainOn(o, *world).status, "ranks", "sage encoder");
  o = Base("distmult");
  o.dataset = dir_->File("kg1");
  EXPECT_ERROR_CONTAINS(TrainOn(o, *world).status, "1 relation rows", "at most 1 ranks");
}

}  // namespace
}  // namespace foresight::trainer
