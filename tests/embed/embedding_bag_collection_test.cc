// EmbeddingBagCollection: several tables in one flat layout trained step by
// step (forward, a gradient that depends on what was read, fused update).
// Behind a cache of three rows (every rule hit: fetches, evictions of dirty
// rows, bypass rows written back, reads after writes), on each store and
// policy, with 1 or 2 threads, every step's output and every final row equal
// the in-memory table's bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "embed_test_util.h"
#include "foresight/autograd/functional.h"
#include "reference/embedding_reference.h"
#include "testing/testing.h"

namespace foresight::embed::test {
namespace {

using kernels::Pooling;
using kernels::SparseOptimizer;
using storage::RowStoreKind;

constexpr int64_t kBatch = 16;
constexpr int kSteps = 12;
const std::vector<int64_t> kRows = {30, 10, 20};

struct TrainSetup {
  RowStoreKind kind = RowStoreKind::kMemory;
  int64_t cache_rows = 0;  // 0: no cache (direct for memory)
  cache::Policy policy = cache::Policy::kLookahead;
  int lookahead = 2;
  SparseOptimizer optimizer = SparseOptimizer::kSgd;
  DType dtype = DType::kF32;
  Pooling pooling = Pooling::kSum;
  bool dynamic = false;
  int threads = 1;
};

struct TrainRun {
  std::vector<float> outputs;  // every step's pooled output
  std::vector<float> rows;     // every table's final embeddings
};

TrainRun Train(const TrainSetup& s) {
  storage::testing::ScratchDir dir;
  EmbeddingBagCollectionOptions o;
  o.table_rows = s.dynamic ? std::vector<int64_t>(kRows.size(), 0) : kRows;
  o.dim = 8;
  o.dtype = s.dtype;
  o.optimizer = s.optimizer;
  o.pooling = s.pooling;
  o.init.seed = 17;
  o.init.scale = 0.5f;
  o.store = StoreFor(s.kind, dir, "c");
  o.cache.policy = s.policy;
  o.cache.lookahead = s.lookahead;
  const kernels::EmbeddingRowLayout layout{o.dim, s.dtype, s.optimizer};
  o.cache.capacity_bytes = s.cache_rows * layout.row_bytes();
  TrainRun run;
  auto opened = EmbeddingBagCollection::Open(o);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  if (!opened.ok()) return run;
  std::unique_ptr<EmbeddingBagCollection> c = std::move(opened).value();
  if (s.policy == cache::Policy::kStatic) {
    // The first rows of each table, by flat key.
    std::vector<int64_t> keys;
    for (int64_t t = 0; t < static_cast<int64_t>(kRows.size()); ++t) keys.push_back(c->Key(t, 0));
    EXPECT_OK(c->table()->SetStaticKeys(keys));
  }
  EXPECT_EQ(c->table()->direct(), s.kind != RowStoreKind::kRocksDb && s.cache_rows == 0);
  ThreadPool pool(s.threads);
  ExecContext ctx = CpuContext(0, &pool);
  const int64_t tables = static_cast<int64_t>(kRows.size());
  const int64_t min_rows = 10;
  int enqueued = 0;
  auto enqueue_upto = [&](int n) {
    for (; enqueued < std::min(n, kSteps); ++enqueued) {
      const Batch b = RandomBatch(tables, kBatch, min_rows, 3, 1000 + enqueued);
      EXPECT_OK(c->Enqueue(b.ids, b.offsets));
    }
    if (enqueued == kSteps) c->Close();
  };
  for (int step = 0; step < kSteps; ++step) {
    enqueue_upto(step + 1 + s.lookahead);
    Tensor out = Tensor::Empty({kBatch, tables * o.dim}, DType::kF32);
    Status st = c->Forward(ctx, Tensor(), &out);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) return run;
    const std::vector<float> v = Values(out);
    run.outputs.insert(run.outputs.end(), v.begin(), v.end());
    // A gradient that depends on the rows read: stale rows would show.
    Tensor grad = Tensor::Empty(out.shape(), DType::kF32);
    for (int64_t i = 0; i < out.numel(); ++i) grad.data<float>()[i] = 0.5f * v[i] - 0.1f;
    kernels::SparseOptimizerConfig cfg;
    cfg.kind = s.optimizer;
    cfg.lr = 0.1f;
    cfg.step = step + 1;
    st = c->BackwardUpdate(ctx, cfg, grad);
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
  for (int64_t t = 0; t < tables; ++t) {
    for (int64_t r = 0; r < min_rows; ++r) {
      std::vector<float> e(static_cast<size_t>(o.dim));
      EXPECT_OK(c->ReadEmbedding(t, r, e.data()));
      run.rows.insert(run.rows.end(), e.begin(), e.end());
    }
  }
  return run;
}

std::string Describe(const TrainSetup& s) {
  return std::string(storage::RowStoreKindName(s.kind)) + " cache_rows=" + std::to_string(s.cache_rows) + " " +
         cache::PolicyName(s.policy) + " W=" + std::to_string(s.lookahead) + " " +
         kernels::SparseOptimizerName(s.optimizer) + " " + DTypeName(s.dtype) + " threads=" +
         std::to_string(s.threads) + (s.dynamic ? " dynamic" : "");
}

void ExpectSame(const TrainRun& a, const TrainRun& b, const std::string& what) {
  ASSERT_EQ(a.outputs.size(), b.outputs.size()) << what;
  EXPECT_EQ(0, std::memcmp(a.outputs.data(), b.outputs.data(), a.outputs.size() * sizeof(float))) << what;
  ASSERT_EQ(a.rows.size(), b.rows.size()) << what;
  EXPECT_EQ(0, std::memcmp(a.rows.data(), b.rows.data(), a.rows.size() * sizeof(float))) << what;
}

class TinyCacheTest : public ::testing::TestWithParam<RowStoreKind> {};

// Each optimizer and dtype behind the lookahead policy; LRU and static once.
TEST_P(TinyCacheTest, EqualsTheInMemoryTable) {
  for (SparseOptimizer opt : {SparseOptimizer::kSgd, SparseOptimizer::kRowwiseAdagrad, SparseOptimizer::kAdam}) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      TrainSetup ref;
      ref.optimizer = opt;
      ref.dtype = dtype;
      const TrainRun expected = Train(ref);
      ASSERT_EQ(expected.outputs.size(), size_t(kSteps * kBatch * 3 * 8));
      std::vector<cache::Policy> policies = {cache::Policy::kLookahead};
      if (opt == SparseOptimizer::kRowwiseAdagrad && dtype == DType::kF32) {
        policies.push_back(cache::Policy::kLru);
        policies.push_back(cache::Policy::kStatic);
      }
      for (cache::Policy policy : policies) {
        TrainSetup s = ref;
        s.kind = GetParam();
        s.cache_rows = 3;
        s.policy = policy;
        s.threads = 2;
        ExpectSame(expected, Train(s), Describe(s));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, TinyCacheTest,
                         ::testing::Values(RowStoreKind::kMemory, RowStoreKind::kMmap, RowStoreKind::kDisk,
                                           RowStoreKind::kRocksDb),
                         [](const auto& info) { return std::string(storage::RowStoreKindName(info.param)); });

TEST(EmbeddingBagCollectionTest, LargerWindowsAndCachesChangeNothing) {
  TrainSetup ref;
  ref.optimizer = SparseOptimizer::kRowwiseAdagrad;
  ref.pooling = Pooling::kMean;
  const TrainRun expected = Train(ref);
  for (int w : {0, 1, 5}) {
    for (int64_t rows : {1, 7, 40}) {
      TrainSetup s = ref;
      s.lookahead = w;
      s.cache_rows = rows;
      ExpectSame(expected, Train(s), Describe(s));
    }
  }
}

TEST(EmbeddingBagCollectionTest, OneAndTwoThreadsAgree) {
  for (SparseOptimizer opt : {SparseOptimizer::kSgd, SparseOptimizer::kAdam}) {
    TrainSetup one;
    one.optimizer = opt;
    TrainSetup two = one;
    two.threads = 2;
    ExpectSame(Train(one), Train(two), Describe(two));
  }
}

TEST(EmbeddingBagCollectionTest, DynamicTablesBehindATinyCacheEqualNoCache) {
  TrainSetup ref;
  ref.kind = RowStoreKind::kRocksDb;
  ref.dynamic = true;
  ref.optimizer = SparseOptimizer::kAdam;
  const TrainRun expected = Train(ref);
  TrainSetup s = ref;
  s.cache_rows = 3;
  s.threads = 2;
  ExpectSame(expected, Train(s), Describe(s));
}

TEST(EmbeddingBagCollectionTest, ForwardMatchesReferenceOnTheInitialRows) {
  EmbeddingBagCollectionOptions o;
  o.table_rows = kRows;
  o.dim = 5;
  o.pooling = Pooling::kMean;
  o.init.seed = 3;
  o.store.create = true;
  o.cache.lookahead = 0;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingBagCollection> c, EmbeddingBagCollection::Open(o));
  // The reference sees the flat rows and per-table offsets.
  reference::RefBags g;
  g.batch = kBatch;
  g.tables = 3;
  g.dim = 5;
  g.mean = true;
  g.table_offsets = {0, 30, 40, 60};
  std::vector<float> rows;
  for (int64_t t = 0; t < 3; ++t) {
    for (int64_t r = 0; r < kRows[t]; ++r) {
      std::vector<float> e(5);
      ASSERT_OK(c->ReadEmbedding(t, r, e.data()));
      rows.insert(rows.end(), e.begin(), e.end());
    }
  }
  const Batch b = RandomBatch(3, kBatch, 10, 4, 77);
  g.ids.assign(b.ids.data<int64_t>(), b.ids.data<int64_t>() + b.ids.numel());
  g.offsets.assign(b.offsets.data<int64_t>(), b.offsets.data<int64_t>() + b.offsets.numel());
  ASSERT_OK(c->Enqueue(b.ids, b.offsets));
  Tensor out = Tensor::Empty({kBatch, 15}, DType::kF32);
  ASSERT_OK(c->Forward(CpuContext(), Tensor(), &out));
  EXPECT_EQ(Values(out), reference::EmbeddingBagForwardRef(g, rows));
  // Tables start from their own default scale: 1/sqrt(rows).
  EXPECT_LE(std::fabs(rows[0]), 1.0f / std::sqrt(30.0f));
}

TEST(EmbeddingBagCollectionTest, RejectsIdsOutsideTheirTable) {
  EmbeddingBagCollectionOptions o;
  o.table_rows = kRows;
  o.dim = 4;
  o.store.create = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingBagCollection> c, EmbeddingBagCollection::Open(o));
  // Two samples, three tables: table 1 has 10 rows, so id 10 is out.
  Tensor ids = Tensor::Empty({3}, DType::kI64);
  const int64_t v[] = {29, 10, 0};
  std::memcpy(ids.raw_data(), v, sizeof(v));
  Tensor offsets = Tensor::Empty({7}, DType::kI64);
  const int64_t off[] = {0, 1, 1, 2, 2, 3, 3};
  std::memcpy(offsets.raw_data(), off, sizeof(off));
  Status s = c->Enqueue(ids, offsets);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("ids[1] = 10 (sample 0 of table 1)"), std::string::npos) << s.ToString();
  Tensor out = Tensor::Empty({2, 12}, DType::kF32);
  EXPECT_EQ(c->Forward(CpuContext(), Tensor(), &out).code(), StatusCode::kFailedPrecondition);
}

// On a tape, the fused update runs as the output's backward node: the same
// rows as a Forward, a separately computed d loss / d out and BackwardUpdate.
TEST(EmbeddingBagCollectionTest, TapeBackwardRunsTheFusedUpdate) {
  EmbeddingBagCollectionOptions o;
  o.table_rows = kRows;
  o.dim = 4;
  o.optimizer = SparseOptimizer::kRowwiseAdagrad;
  o.init.seed = 8;
  o.store.create = true;
  o.cache.lookahead = 0;
  const Batch b = RandomBatch(3, kBatch, 10, 3, 5);
  Tensor weight = Tensor::Empty({12, 3}, DType::kF32);
  for (int64_t i = 0; i < weight.numel(); ++i) weight.data<float>()[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  Tensor labels = Tensor::Empty({kBatch}, DType::kI64);
  for (int64_t i = 0; i < kBatch; ++i) labels.data<int64_t>()[i] = i % 3;
  kernels::SparseOptimizerConfig cfg;
  cfg.kind = SparseOptimizer::kRowwiseAdagrad;
  cfg.lr = 0.5f;
  auto loss_of = [&](autograd::Tape& tape, const autograd::Var& out) -> StatusOr<autograd::Var> {
    FS_ASSIGN_OR_RETURN(autograd::Var logits, autograd::MatMul(tape, out, autograd::Var(weight)));
    FS_ASSIGN_OR_RETURN(autograd::Var logp, autograd::LogSoftmax(tape, logits));
    return autograd::NllLoss(tape, logp, labels);
  };
  // On the tape.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingBagCollection> a, EmbeddingBagCollection::Open(o));
  ASSERT_OK(a->Enqueue(b.ids, b.offsets));
  {
    autograd::Tape tape(CpuContext(), /*training=*/true);
    ASSERT_OK_AND_ASSIGN(autograd::Var out, a->Forward(&tape, Tensor(), cfg));
    ASSERT_OK_AND_ASSIGN(autograd::Var loss, loss_of(tape, out));
    ASSERT_OK(tape.Backward(loss));
  }
  // By hand.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingBagCollection> m, EmbeddingBagCollection::Open(o));
  ASSERT_OK(m->Enqueue(b.ids, b.offsets));
  Tensor out = Tensor::Empty({kBatch, 12}, DType::kF32);
  ASSERT_OK(m->Forward(CpuContext(), Tensor(), &out));
  Tensor grad_out;
  {
    autograd::Tape tape(CpuContext(), /*training=*/true);
    autograd::Var leaf(out, /*requires_grad=*/true);
    ASSERT_OK_AND_ASSIGN(autograd::Var loss, loss_of(tape, leaf));
    ASSERT_OK(tape.Backward(loss));
    grad_out = leaf.grad();
  }
  ASSERT_TRUE(grad_out.defined());
  ASSERT_OK(m->BackwardUpdate(CpuContext(), cfg, grad_out));
  // The initial rows, to see that the tape did update some.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<EmbeddingBagCollection> fresh, EmbeddingBagCollection::Open(o));
  int changed = 0;
  for (int64_t t = 0; t < 3; ++t) {
    for (int64_t r = 0; r < 10; ++r) {
      float ea[4], em[4], e0[4];
      ASSERT_OK(a->ReadEmbedding(t, r, ea));
      ASSERT_OK(m->ReadEmbedding(t, r, em));
      ASSERT_OK(fresh->ReadEmbedding(t, r, e0));
      EXPECT_EQ(0, std::memcmp(ea, em, sizeof(ea))) << "table " << t << " row " << r;
      changed += std::memcmp(ea, e0, sizeof(ea)) != 0 ? 1 : 0;
    }
  }
  EXPECT_GT(changed, 10);
}

}  // namespace
}  // namespace foresight::embed::test
