// Data-parallel GraphSAGE with --order partition, the partitions split
// between the ranks (sampler/owned_partition_order.h). Under `mpirun -np N`
// (tests/trainer/CMakeLists.txt: 2 and 3 ranks, shared memory and TCP)
// every rank checks that:
// - N ranks take the steps of one process given rank_partitions N (the
//   same global batches): per-step losses within 1e-5 relative for 50
//   steps, accuracies within 0.002; those global batches are not the plain
//   partition order's (the split is in effect);
// - each rank reads exactly the rows its own batches need (sampled here
//   as the pipeline samples them), and those lie in its own partitions or
//   their halo (in-neighbours within the layers' hops of its own seeds,
//   found from the graph, not the sampler), fewer than the whole graph;
// - a checkpoint resumes on the same ranks as an uninterrupted run, and
//   on one process only with rank_partitions N;
// - more ranks than partitions, or a rank_partitions of another count,
//   is refused on every rank.
// The datasets are cut by METIS into 5 partitions (not divisible by 2 or
// 3 ranks) and 6. Run as one process (the discovered test), the one-rank
// forms of the same checks run.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "foresight/core/communicator.h"
#include "foresight/core/context.h"
#include "foresight/core/thread_pool.h"
#include "foresight/graph/partition.h"
#include "foresight/sampler/neighbor_sampler.h"
#include "foresight/sampler/owned_partition_order.h"
#include "foresight/trainer/trainer.h"
#include "node_data.h"
#include "sharded_test_util.h"
#include "trainer_test_util.h"

namespace foresight::trainer {
namespace {

Status Partition(const std::string& dir, int parts) {
  graph::PartitionOptions po;
  po.parts = parts;
  po.method = "metis";
  po.seed = 1;
  return graph::PartitionDataset(CpuContext(1), dir, po).status();
}

class RankPartitionsTest : public ::testing::Test {
 protected:
  // A weak class signal and mixed neighbourhoods, so accuracy is not 1
  // and the accuracy comparison means something.
  void SetUp() override {
    testing::SyntheticSpec spec;
    spec.signal = 0.15;
    spec.same_class = 0.6;
    ASSERT_OK(testing::WriteSyntheticDataset(dir_.File("data"), spec));
    ASSERT_OK(Partition(dir_.File("data"), 5));
    StatusOr<Communicator*> world = WorldCommunicator();
    ASSERT_OK(world.status());
    world_ = *world;
  }
  // SAGE in the partition order, groups of one partition, on the disk
  // store behind a cache of 40 rows (the lookahead reads and evicts).
  TrainOptions Options(const std::string& data) const {
    TrainOptions o = testing::SmallOptions(data, "sage", /*full_graph=*/false);
    o.order = "partition";
    o.resident_partitions = 1;
    o.batch_size = 17;  // 120 training seeds: 8 global batches an epoch
    o.epochs = 7;       // 56 steps
    o.feature_store = "disk";
    o.cache_size = 40 * 8 * 4;  // 40 rows of 8 f32
    return o;
  }
  testing::TempDir dir_;
  Communicator* world_ = nullptr;
};

TEST_F(RankPartitionsTest, RanksOwningPartitionsTakeTheStepsOfOneProcess) {
  const int ranks = world_->size();
  std::unique_ptr<Communicator> single = MakeSingleProcessCommunicator();
  TrainOptions o = Options(dir_.File("data"));
  const TrainedRun parallel = TrainOn(o, world_);
  ASSERT_OK(parallel.status);
  o.rank_partitions = ranks;
  const TrainedRun reference = TrainOn(o, single.get());
  ASSERT_OK(reference.status);
  o.rank_partitions = 0;
  const TrainedRun plain = TrainOn(o, single.get());
  ASSERT_OK(plain.status);
  const std::string what = std::to_string(ranks) + " ranks";
  ASSERT_GE(reference.losses.size(), 50u);
  ASSERT_EQ(parallel.losses.size(), reference.losses.size()) << what;
  const double worst = testing::ExpectLossesNear(parallel.losses, reference.losses, 50, what);
  std::printf("%s owning partitions: largest relative loss difference in 50 steps %.3g, test_acc %.4f / %.4f\n",
              what.c_str(), worst, parallel.summary.test_acc, reference.summary.test_acc);
  EXPECT_NEAR(parallel.summary.test_acc, reference.summary.test_acc, 0.002) << what;
  EXPECT_NEAR(parallel.summary.best_val_acc, reference.summary.best_val_acc, 0.002) << what;
  ASSERT_EQ(parallel.summary.history.size(), reference.summary.history.size());
  for (size_t e = 0; e < reference.summary.history.size(); ++e) {
    EXPECT_EQ(parallel.summary.history[e].seeds, reference.summary.history[e].seeds) << what;
    EXPECT_NEAR(parallel.summary.history[e].train_acc, reference.summary.history[e].train_acc, 1e-9) << what;
  }
  // Split between ranks, the global batches are not the plain order's.
  ASSERT_EQ(plain.losses.size(), reference.losses.size());
  if (ranks > 1) {
    EXPECT_NE(plain.losses[1], reference.losses[1]) << "the split changed no batch";
  }
  if (ranks == 1) {
    // One process emulating 3 ranks trains their global batches (not the plain order's).
    o.rank_partitions = 3;
    const TrainedRun three = TrainOn(o, single.get());
    ASSERT_OK(three.status);
    EXPECT_NE(three.losses[1], plain.losses[1]);
  }
}

// The rows a rank's batches need: the input nodes of its part of every
// global batch of `epochs` epochs, sampled as the pipeline samples them.
std::set<int64_t> RowsOfRankBatches(const TrainOptions& o, const internal::NodeData& data, int rank, int ranks) {
  const storage::Dataset& d = *data.dataset;
  sampler::OwnedPartitionOrder order(d.train_ids(), d.partition_offsets(), o.batch_size, o.seed,
                                     o.resident_partitions, ranks);
  EXPECT_OK(order.status());
  ThreadPool pool(1);
  const ExecContext ctx = CpuContext(o.seed, &pool);
  sampler::NeighborSampler sampler(data.graph, o.fanouts, o.seed);
  std::set<int64_t> rows;
  for (int64_t e = 0; e < o.epochs; ++e) {
    for (int64_t b = 0; b < order.num_batches(); ++b) {
      sampler::SampledBatch batch;
      EXPECT_OK(sampler.Sample(ctx, order.Part(rank).Batch(e, b), e, b, &batch));
      const int64_t* in = batch.input_nodes.data<int64_t>();
      rows.insert(in, in + batch.input_nodes.numel());
    }
  }
  return rows;
}

// A rank's partitions' rows and every in-neighbour within `hops` of its
// training ids, from the graph alone.
std::set<int64_t> OwnRowsAndHalo(const internal::NodeData& data, const std::vector<int>& partitions, int hops) {
  const storage::Dataset& d = *data.dataset;
  const std::vector<int64_t>& offsets = d.partition_offsets();
  std::set<int64_t> rows, frontier;
  for (int p : partitions) {
    for (int64_t v = offsets[p]; v < offsets[p + 1]; ++v) rows.insert(v);
  }
  for (int64_t id : testing::VectorOf<int64_t>(d.train_ids())) {
    if (rows.count(id)) frontier.insert(id);
  }
  const int64_t* indptr = data.graph.indptr.data<int64_t>();
  for (int h = 0; h < hops; ++h) {
    std::set<int64_t> next;
    for (int64_t v : frontier) {
      for (int64_t k = indptr[v]; k < indptr[v + 1]; ++k) {
        const int64_t u = data.graph.indices.dtype() == DType::kI32 ? data.graph.indices.data<int32_t>()[k]
                                                                    : data.graph.indices.data<int64_t>()[k];
        if (rows.insert(u).second) next.insert(u);
      }
    }
    frontier = std::move(next);
  }
  return rows;
}

TEST_F(RankPartitionsTest, EachRankReadsOnlyItsPartitionsAndTheirHalo) {
  const int ranks = world_->size(), rank = world_->rank();
  // Three classes that never link (islands), cut in 6 partitions: a rank's
  // halo stays in the islands its partitions are on.
  testing::SyntheticSpec spec;
  spec.same_class = 1.0;
  spec.seed = 2;
  const std::string islands = dir_.File("islands");
  ASSERT_OK(testing::WriteSyntheticDataset(islands, spec));
  ASSERT_OK(Partition(islands, 6));
  TrainOptions o = Options(islands);
  o.epochs = 2;
  // Every row fits: a row is read once, the first time a batch needs it.
  o.cache_size = spec.num_nodes * spec.feature_dim * 4;
  o.hot_fraction = 0;
  o.page_companions = "off";
  const TrainedRun run = TrainOn(o, world_);
  ASSERT_OK(run.status);
  int64_t rows_read = 0;
  for (const EpochMetrics& m : run.summary.history) rows_read += m.rows_read;

  internal::NodeData data;
  ASSERT_OK(internal::OpenNodeData(islands, &data));
  const std::set<int64_t> needed = RowsOfRankBatches(o, data, rank, ranks);
  EXPECT_EQ(rows_read, static_cast<int64_t>(needed.size())) << "rank " << rank << " read rows its batches do not need";
  sampler::OwnedPartitionOrder order(data.dataset->train_ids(), data.dataset->partition_offsets(), o.batch_size,
                                     o.seed, 1, ranks);
  ASSERT_OK(order.status());
  const std::set<int64_t> bound = OwnRowsAndHalo(data, order.OwnerPartitions(rank), static_cast<int>(o.fanouts.size()));
  for (int64_t v : needed) ASSERT_TRUE(bound.count(v)) << "rank " << rank << " needs row " << v << " outside its halo";
  std::printf("rank %d/%d: partitions of %ld rows; own rows and halo %zu; rows read %ld of %ld\n", rank, ranks,
              static_cast<long>(order.OwnerRows(rank)), bound.size(), static_cast<long>(rows_read),
              static_cast<long>(spec.num_nodes));
  if (ranks > 1) {
    EXPECT_LT(rows_read, spec.num_nodes) << "rank " << rank << " read the whole graph";
  }

  // A hot tier of half the cache takes the highest in-degree rows of the
  // rank's own partitions: it reads no row outside them and the halo.
  o.hot_fraction = 0.5;
  const TrainedRun hot = TrainOn(o, world_);
  ASSERT_OK(hot.status);
  int64_t hot_rows_read = 0;
  for (const EpochMetrics& m : hot.summary.history) hot_rows_read += m.rows_read;
  std::set<int64_t> needed_or_own = needed;
  const std::vector<int64_t>& offsets = data.dataset->partition_offsets();
  for (int p : order.OwnerPartitions(rank)) {
    for (int64_t v = offsets[p]; v < offsets[p + 1]; ++v) needed_or_own.insert(v);
  }
  EXPECT_GE(hot_rows_read, rows_read);
  EXPECT_LE(hot_rows_read, static_cast<int64_t>(needed_or_own.size()))
      << "rank " << rank << "'s hot tier read rows of other ranks' partitions";
}

TEST_F(RankPartitionsTest, ACheckpointResumesOnTheSameRanks) {
  const int ranks = world_->size();
  SharedDir shared(world_);
  TrainOptions o = Options(dir_.File("data"));
  o.epochs = 4;
  const TrainedRun full = TrainOn(o, world_);
  ASSERT_OK(full.status);
  o.checkpoint_dir = shared.File("ckpt");
  o.epochs = 2;
  const TrainedRun first = TrainOn(o, world_);
  ASSERT_OK(first.status);
  o.epochs = 4;
  o.resume = true;
  const TrainedRun second = TrainOn(o, world_);
  ASSERT_OK(second.status);
  ASSERT_EQ(first.losses.size() + second.losses.size(), full.losses.size());
  for (size_t i = 0; i < second.losses.size(); ++i) {
    EXPECT_EQ(second.losses[i], full.losses[first.losses.size() + i]) << "step " << first.losses.size() + i;
  }
  EXPECT_EQ(second.summary.test_acc, full.summary.test_acc);
  if (ranks == 1) return;
  if (world_->rank() == 0) {
    std::unique_ptr<Communicator> single = MakeSingleProcessCommunicator();
    o.epochs = 5;
    // One process is another split of the partitions: refused.
    EXPECT_ERROR_CONTAINS(TrainOn(o, single.get()).status, "different training options");
    // With rank_partitions N it takes the ranks' global batches: accepted.
    o.rank_partitions = ranks;
    EXPECT_OK(TrainOn(o, single.get()).status);
  }
  ASSERT_OK(world_->Barrier());
}

TEST_F(RankPartitionsTest, RefusesMoreRanksThanPartitionsAndAnotherSplit) {
  const int ranks = world_->size();
  std::unique_ptr<Communicator> single = MakeSingleProcessCommunicator();
  TrainOptions o = Options(dir_.File("data"));
  o.rank_partitions = 6;
  EXPECT_ERROR_CONTAINS(TrainOn(o, single.get()).status,
                        "6 ranks need at least as many partitions, but the dataset has 5");
  // A whole-graph halo ranking does not fit partitions split between ranks.
  o.rank_partitions = 2;
  o.feature_store = "disk";
  o.hot_fraction = 0.5;
  o.hot_rank = "halo";
  EXPECT_ERROR_CONTAINS(TrainOn(o, single.get()).status, "hot_rank: halo", "rank_partitions 2", "in-degree");
  o = Options(dir_.File("data"));
  if (ranks == 1) return;
  o.rank_partitions = ranks + 1;
  EXPECT_ERROR_CONTAINS(TrainOn(o, world_).status, "rank_partitions " + std::to_string(ranks + 1));
  // A dataset of fewer partitions than ranks: every rank refuses it.
  ASSERT_OK(testing::WriteSyntheticDataset(dir_.File("few"), testing::SyntheticSpec()));
  ASSERT_OK(Partition(dir_.File("few"), ranks - 1));
  o = Options(dir_.File("few"));
  EXPECT_ERROR_CONTAINS(TrainOn(o, world_).status, std::to_string(ranks) + " ranks need at least as many partitions");
}

}  // namespace
}  // namespace foresight::trainer
