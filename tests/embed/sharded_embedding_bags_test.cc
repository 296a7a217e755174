// ShardedEmbeddingBags against one EmbeddingBagCollection fed the whole
// global batch: under `mpirun -np N` (tests/embed/CMakeLists.txt) each rank
// gives its part of every batch to the sharded tables and the whole batch
// to its own reference collection; its pooled part must equal the
// reference's rows of it, and after several updates every row a rank owns
// must equal the reference's row. Row-wise and table-wise, on the memory
// store and behind a small cache; batches with empty bags, repeated ids
// and a part of zero samples. Also the sharding plan itself. As one process
// the sharded tables are a single shard.
#include <cmath>
#include <string>
#include <vector>

#include "foresight/core/communicator.h"
#include "foresight/core/thread_pool.h"
#include "foresight/embed/sharded_embedding_bags.h"
#include "testing/testing.h"

namespace foresight::embed {
namespace {

TEST(EmbeddingShardingTest, RowWiseSpreadsIdsAndTableWiseBalancesRows) {
  ASSERT_OK_AND_ASSIGN(EmbeddingSharding rows, EmbeddingSharding::Make(ShardingKind::kRow, {10, 7}, 3));
  EXPECT_EQ(rows.Owner(1, 5), 2);
  EXPECT_EQ(rows.LocalId(5), 1);
  EXPECT_EQ(rows.GlobalId(2, 1), 5);
  EXPECT_EQ(rows.ShardRows(0), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(rows.ShardRows(2), (std::vector<int64_t>{3, 2}));
  ASSERT_OK_AND_ASSIGN(EmbeddingSharding tables,
                       EmbeddingSharding::Make(ShardingKind::kTable, {10, 70, 30, 40, 5}, 2));
  // 70 -> 0, 40 -> 1, 30 -> 1, 10 -> 0, 5 -> 1 (loads 80 and 75).
  EXPECT_EQ(tables.TablesOf(0), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(tables.TablesOf(1), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(tables.Owner(3, 12), 1);
  EXPECT_EQ(tables.LocalId(12), 12);
  EXPECT_ERROR_CONTAINS(EmbeddingSharding::Make(ShardingKind::kTable, {10}, 2).status(), "--sharding row");
  EXPECT_ERROR_CONTAINS(EmbeddingSharding::Make(ShardingKind::kRow, {10, 1}, 2).status(), "--sharding table");
  EXPECT_ERROR_CONTAINS(ParseShardingKind("column").status(), "row, table");
}

struct GlobalBatch {
  Tensor ids, offsets;  // T*B bags, table-major
  int64_t batch = 0;
};

// Batch `step`: bags of 0..3 ids (repeats likely in the small tables).
GlobalBatch MakeBatch(const std::vector<int64_t>& rows, int64_t batch, int step) {
  const int64_t tables = static_cast<int64_t>(rows.size());
  std::vector<int64_t> ids, offsets{0};
  for (int64_t t = 0; t < tables; ++t) {
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = (b * 7 + t * 3 + step) % 4;
      for (int64_t k = 0; k < len; ++k) ids.push_back((b * 31 + k * 17 + t * 5 + step * 13) % rows[t]);
      offsets.push_back(static_cast<int64_t>(ids.size()));
    }
  }
  return {testing::TensorOf(ids), testing::TensorOf(offsets), batch};
}

// Samples [begin, begin + n) of every table's bags.
GlobalBatch Part(const GlobalBatch& g, int64_t tables, int64_t begin, int64_t n) {
  const int64_t* off = g.offsets.data<int64_t>();
  std::vector<int64_t> ids, offsets{0};
  for (int64_t t = 0; t < tables; ++t) {
    for (int64_t b = begin; b < begin + n; ++b) {
      const int64_t q = t * g.batch + b;
      for (int64_t k = off[q]; k < off[q + 1]; ++k) ids.push_back(g.ids.data<int64_t>()[k]);
      offsets.push_back(static_cast<int64_t>(ids.size()));
    }
  }
  return {testing::TensorOf(ids), testing::TensorOf(offsets), n};
}

void ExpectShardedEqualsOne(ShardingKind kind, int64_t cache_bytes) {
  StatusOr<Communicator*> world = WorldCommunicator();
  ASSERT_OK(world.status());
  Communicator* comm = *world;
  const int rank = comm->rank(), ranks = comm->size();
  EmbeddingBagCollectionOptions o;
  o.table_rows = {23, 9, 40};
  o.dim = 4;
  o.optimizer = kernels::SparseOptimizer::kRowwiseAdagrad;
  o.init.seed = 5;
  o.store.create = true;
  o.store.writable = true;
  o.cache.capacity_bytes = cache_bytes;
  o.cache.lookahead = 0;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingBagCollection> one, EmbeddingBagCollection::Open(o));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ShardedEmbeddingBags> sharded, ShardedEmbeddingBags::Open(o, kind, comm));
  ThreadPool pool(1);
  const ExecContext ctx = CpuContext(0, &pool);
  kernels::SparseOptimizerConfig config;
  config.kind = o.optimizer;
  config.lr = 0.1f;
  const int64_t tables = 3, d = 4;
  const std::string what = std::string(ShardingKindName(kind)) + "-wise, cache " + std::to_string(cache_bytes);
  for (int step = 0; step < 6; ++step) {
    // Batch 2 has fewer samples than 3 ranks: a part is empty.
    const int64_t batch = step == 2 ? 2 : 7;
    const GlobalBatch g = MakeBatch(o.table_rows, batch, step);
    const int64_t begin = RankPartBegin(batch, rank, ranks), n = RankPartSize(batch, rank, ranks);
    const GlobalBatch mine = Part(g, tables, begin, n);
    ASSERT_OK(one->Enqueue(g.ids, g.offsets));
    ASSERT_OK(sharded->Enqueue(mine.ids, mine.offsets, batch));
    Tensor want = Tensor::Empty({batch, tables * d}, DType::kF32);
    ASSERT_OK(one->Forward(ctx, Tensor(), &want));
    Tensor got;
    ASSERT_OK(sharded->Forward(ctx, &got));
    ASSERT_EQ(got.size(0), n);
    for (int64_t i = 0; i < n * tables * d; ++i) {
      ASSERT_NEAR(got.data<float>()[i], want.data<float>()[begin * tables * d + i], 1e-6) << what << " step " << step;
    }
    Tensor grad = Tensor::Empty({batch, tables * d}, DType::kF32);
    for (int64_t i = 0; i < grad.numel(); ++i) grad.data<float>()[i] = std::sin(0.37f * i + step);
    ASSERT_OK(one->BackwardUpdate(ctx, config, grad));
    ASSERT_OK_AND_ASSIGN(Tensor part, grad.Slice(0, begin, begin + n).Contiguous());
    ASSERT_OK(sharded->BackwardUpdate(ctx, config, part));
  }
  ASSERT_OK(sharded->Flush());
  const EmbeddingSharding& plan = sharded->sharding();
  const std::vector<int64_t>& mine = plan.TablesOf(rank);
  for (size_t k = 0; k < mine.size(); ++k) {
    const int64_t t = mine[k];
    for (int64_t id = 0; id < o.table_rows[t]; ++id) {
      if (plan.Owner(t, id) != rank) continue;
      float a[4], b[4];
      ASSERT_OK(one->ReadEmbedding(t, id, a));
      ASSERT_OK(sharded->shard()->ReadEmbedding(static_cast<int64_t>(k), plan.LocalId(id), b));
      for (int j = 0; j < 4; ++j) ASSERT_NEAR(b[j], a[j], 1e-6) << what << " table " << t << " row " << id;
    }
  }
}

TEST(ShardedEmbeddingBagsTest, RowWiseEqualsOneCollection) { ExpectShardedEqualsOne(ShardingKind::kRow, 0); }
TEST(ShardedEmbeddingBagsTest, TableWiseEqualsOneCollection) { ExpectShardedEqualsOne(ShardingKind::kTable, 0); }
TEST(ShardedEmbeddingBagsTest, BehindASmallCache) {
  ExpectShardedEqualsOne(ShardingKind::kRow, 6 * 32);
  ExpectShardedEqualsOne(ShardingKind::kTable, 6 * 32);
}

}  // namespace
}  // namespace foresight::embed
