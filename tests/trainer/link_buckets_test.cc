// `train --task link --order buckets`: an epoch trains every training
// triple once, bucket by bucket, and each chunk's negatives come from the
// partitions resident with its first positive (so a chunk touches at most
// the buffer's partitions); the batcher reports the plan's partition loads
// against the lower bound; training in bucket order learns, and gives the
// same per-step losses with the entity table on the disk store behind a
// small cache as in memory, bit for bit; a run resumed from a checkpoint
// gives the same losses as an uninterrupted one; bad combinations are
// refused.
#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "foresight/datasets/preprocess.h"
#include "foresight/storage/link_triples.h"
#include "foresight/trainer/trainer.h"
#include "link_batches.h"
#include "testing/testing.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

using foresight::testing::StepLosses;

// 400 nodes in 8 clusters of 50, 5 links a node (4 in its cluster), split 80/10/10.
class LinkBucketsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    uint64_t state = 99;
    auto next = [&]() {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<int64_t>(state >> 33);
    };
    std::string edges;
    for (int64_t v = 0; v < 400; ++v) {
      for (int k = 0; k < 4; ++k) edges += std::to_string(v) + " " + std::to_string(v / 50 * 50 + next() % 50) + "\n";
      edges += std::to_string(v) + " " + std::to_string(next() % 400) + "\n";
    }
    testing::WriteFile(dir_->File("edges.txt"), edges);
    datasets::PreprocessOptions o;
    o.format = datasets::InputFormat::kEdgeList;
    o.edges = dir_->File("edges.txt");
    o.output = dir_->File("graph");
    o.task = "link";
    o.edge_split = {0.8, 0.1, 0.1};
    o.seed = 3;
    ASSERT_OK(datasets::Preprocess(o, CpuContext()));
  }
  static void TearDownTestSuite() { delete dir_; }

  static TrainOptions Options() {
    TrainOptions o;
    o.dataset = dir_->File("graph");
    o.task = "link";
    o.model = "distmult";
    o.order = "buckets";
    o.entity_partitions = 8;
    o.resident_partitions = 4;
    o.embedding_dim = 16;
    o.negatives = 20;
    o.batch_size = 100;
    o.negative_chunk = 25;
    o.epochs = 30;
    o.sparse_optimizer = "adam";
    o.sparse_lr = 0.05f;
    o.weight_decay = 0.0f;
    o.init_scale = 0.1f;
    o.eval_epochs = 10;
    o.progress = false;
    o.threads = 1;
    o.seed = 5;
    return o;
  }


  static testing::TempDir* dir_;
};
testing::TempDir* LinkBucketsTest::dir_ = nullptr;

TEST_F(LinkBucketsTest, EveryTripleOnceAndNegativesFromResidentPartitions) {
  const TrainOptions o = Options();
  ASSERT_OK_AND_ASSIGN(auto lt, storage::LinkTriples::Open(o.dataset));
  internal::LinkBatcher batcher(*lt, o);
  EXPECT_EQ(batcher.partition_loads_lower_bound(), 12);  // 4 + ceil((28 - 6) / 3)
  EXPECT_GE(batcher.partition_loads(), 12);
  EXPECT_LE(batcher.partition_loads(), 14);  // 1.2x
  std::multiset<std::tuple<int64_t, int64_t, int64_t>> want, got0, got1;
  const int64_t* t = lt->train().data<int64_t>();
  for (int64_t i = 0; i < lt->train().size(0); ++i) want.emplace(t[3 * i], t[3 * i + 1], t[3 * i + 2]);
  std::vector<int64_t> first_heads[2];
  for (int epoch : {0, 1}) {
    auto& got = epoch == 0 ? got0 : got1;
    for (int64_t b = 0; b < batcher.batches_per_epoch(); ++b) {
      const internal::LinkBatch batch = batcher.Make(epoch, b);
      for (int64_t i = 0; i < batch.size; ++i) got.emplace(batch.heads[i], batch.relations[i], batch.tails[i]);
      first_heads[epoch].push_back(batch.heads[0]);
      for (int64_t c = 0; c < batch.num_chunks; ++c) {
        std::set<int> parts = {batcher.PartitionOf(batch.heads[c * batch.chunk]),
                               batcher.PartitionOf(batch.tails[c * batch.chunk])};
        for (int64_t k = 0; k < 2 * batch.negatives; ++k) {
          parts.insert(batcher.PartitionOf(batch.entity_keys[batch.TailNegatives(c) + k]));
        }
        EXPECT_LE(parts.size(), 4u) << "epoch " << epoch << " batch " << b << " chunk " << c;
      }
    }
  }
  EXPECT_EQ(got0, want);
  EXPECT_EQ(got1, want);
  EXPECT_NE(first_heads[0], first_heads[1]);  // epochs visit the buckets in other orders
}

TEST_F(LinkBucketsTest, TrainsAndDiskStoreEqualsMemoryBitForBit) {
  TrainOptions o = Options();
  TrainSummary s;
  ASSERT_OK(Train(o, &s));
  o.order = "random";
  o.entity_partitions = 0;
  TrainSummary random;
  ASSERT_OK(Train(o, &random));
  // Chance is an MRR of about 0.017 (400 candidates), a perfect cluster
  // model's about 0.09; negatives from the resident partitions only cost
  // little against the random order's.
  EXPECT_GT(s.test_mrr, 0.025);
  EXPECT_GT(s.test_mrr, 0.75 * random.test_mrr);
  EXPECT_LT(s.history.back().loss, s.history.front().loss);
  o = Options();
  o.epochs = 2;
  const std::vector<double> memory = StepLosses(o);
  o.table_store = "disk";
  o.cache_size = 150 * 16 * 4;  // rows of about 3 partitions (the row's optimizer state makes it fewer)
  o.lookahead = 4;
  EXPECT_EQ(StepLosses(o), memory);
}

TEST_F(LinkBucketsTest, ResumedRunEqualsUninterruptedOne) {
  // Bucket order is a function of seed and epoch, so a checkpoint after
  // epoch 2 resumes to the same per-step losses as 4 epochs straight; the
  // bucket options are part of what a checkpoint must match.
  TrainOptions o = Options();
  o.epochs = 4;
  const std::vector<double> straight = StepLosses(o);
  o.checkpoint_dir = dir_->File("ck-buckets");
  o.epochs = 2;
  std::vector<double> losses = StepLosses(o);
  o.epochs = 4;
  o.resume = true;
  const std::vector<double> rest = StepLosses(o);
  losses.insert(losses.end(), rest.begin(), rest.end());
  EXPECT_EQ(losses, straight);
  o.entity_partitions = 4;
  o.resident_partitions = 2;
  TrainSummary s;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "resume", "different training options");
}

TEST_F(LinkBucketsTest, BadCombinationsAreRefused) {
  TrainSummary s;
  TrainOptions o = Options();
  o.entity_partitions = 0;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "entity_partitions", ">= 1");
  o = Options();
  o.resident_partitions = 1;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "resident_partitions", ">= 2");
  o = Options();
  o.negative_sampling = "degree";
  EXPECT_ERROR_CONTAINS(Train(o, &s), "negative_sampling", "resident partitions");
  o = Options();
  o.sampled_softmax = true;
  EXPECT_ERROR_CONTAINS(Train(o, &s), "sampled_softmax", "order buckets");
  o = Options();
  o.model = "sage";
  o.node_features = "one-hot";
  EXPECT_ERROR_CONTAINS(Train(o, &s), "order", "shallow");
  o = Options();
  o.order = "random";
  EXPECT_ERROR_CONTAINS(Train(o, &s), "entity_partitions", "order buckets");
}

}  // namespace
}  // namespace foresight::trainer
