// Embedding-bag forward and fused backward + update against the naive
// references (tests/reference/embedding_reference.h), bit for bit: sum and
// mean pooling, per-sample weights, several tables with row offsets and ids
// indexing rows directly, duplicate ids, i32/i64 ids, f32 and f16 rows, each
// optimizer, 1 and 2 threads; hand-computed updates; argument errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "embedding_bag_test_util.h"

namespace foresight::kernels::test {
namespace {

TEST(EmbeddingBagTest, RowLayoutPutsStateBesideTheEmbedding) {
  EmbeddingRowLayout sgd{64, DType::kF32, SparseOptimizer::kSgd};
  EXPECT_EQ(sgd.row_width(), 64);
  EmbeddingRowLayout ada{64, DType::kF32, SparseOptimizer::kRowwiseAdagrad};
  EXPECT_EQ(ada.row_width(), 65);
  EmbeddingRowLayout adam{64, DType::kF32, SparseOptimizer::kAdam};
  EXPECT_EQ(adam.row_width(), 64 * 3);
  EmbeddingRowLayout half_odd{13, DType::kF16, SparseOptimizer::kRowwiseAdagrad};
  EXPECT_EQ(half_odd.state_offset(), 14);  // 26 bytes padded to 28
  EXPECT_EQ(half_odd.row_width(), 16);     // + one f32 = two f16 slots
  EXPECT_EQ(half_odd.row_bytes(), 32);
}

// AllCases() and, for each, the same case with 9 tables: at 2 threads the
// backward groups and applies whole tables per task when there are at least
// 4 tables a thread, and spreads each table's rows over the pool below that;
// both ways must give the reference's bits. Each also 70 wide: the f32 rows
// are summed, copied and updated 64 floats at a time in AVX registers, with
// a scalar tail (12 and 13 wide rows have only the tail).
std::vector<Case> CasesWithFewAndManyTables() {
  std::vector<Case> cases = AllCases();
  const size_t n = cases.size();
  for (size_t i = 0; i < n; ++i) {
    Case many = cases[i];
    many.tables = 9;
    cases.push_back(many);
  }
  for (size_t i = 0; i < 2 * n; ++i) {
    Case wide = cases[i];
    wide.dim = 70;
    cases.push_back(wide);
  }
  return cases;
}

std::string Trace(const Case& c) {
  return Name(c) + "/tables=" + std::to_string(c.tables) + "/dim=" + std::to_string(c.dim) +
         "/batch=" + std::to_string(c.batch);
}

TEST(EmbeddingBagTest, ForwardMatchesReferenceBitForBit) {
  for (const Case& c : CasesWithFewAndManyTables()) {
    SCOPED_TRACE(Trace(c));
    Problem p = Make(c);
    ThreadPool pool(2);
    const Tensor out = Forward(p, c, &pool);
    EXPECT_EQ(Vec(out), reference::EmbeddingBagForwardRef(p.ref, p.emb));
  }
}

TEST(EmbeddingBagTest, BackwardUpdateMatchesReferenceBitForBit) {
  for (const Case& c : CasesWithFewAndManyTables()) {
    SCOPED_TRACE(Trace(c));
    Problem p = Make(c);
    const SparseOptimizerConfig cfg = ConfigOf(c.opt);
    std::vector<float> emb = p.emb, state = p.state;
    reference::EmbeddingBagUpdateRef(p.ref, Vec(p.grad_out), RefOf(cfg), c.dtype == DType::kF16, &emb, &state);
    ThreadPool pool(2);
    Backward(&p, c, cfg, &pool);
    EXPECT_EQ(Embeddings(p), emb);
    EXPECT_EQ(State(p), state);
  }
}

TEST(EmbeddingBagTest, DeterministicAcrossThreadCounts) {
  // Large enough for many chunks, with heavy duplication.
  for (SparseOptimizer opt : {SparseOptimizer::kSgd, SparseOptimizer::kRowwiseAdagrad, SparseOptimizer::kAdam}) {
    Case c;
    c.batch = 700;
    c.tables = 4;
    c.dim = 24;
    c.rows_per_table = 50;
    c.max_bag = 6;
    c.opt = opt;
    Problem p1 = Make(c), p2 = Make(c);
    ThreadPool one(1), two(2);
    EXPECT_EQ(Vec(Forward(p1, c, &one)), Vec(Forward(p2, c, &two)));
    Backward(&p1, c, ConfigOf(opt), &one);
    Backward(&p2, c, ConfigOf(opt), &two);
    EXPECT_EQ(0, std::memcmp(p1.weights.raw_data(), p2.weights.raw_data(), p1.weights.nbytes()))
        << SparseOptimizerName(opt);
  }
}

// Every case of CasesWithFewAndManyTables() with exactly one id a bag (the
// forward's own path), and a larger one whose batch spans several chunks.
std::vector<Case> OneIdPerBagCases() {
  std::vector<Case> cases = CasesWithFewAndManyTables();
  Case big;
  big.batch = 300;
  big.tables = 9;
  big.rows_per_table = 40;
  cases.push_back(big);
  for (Case& c : cases) c.min_bag = c.max_bag = 1;
  return cases;
}

TEST(EmbeddingBagTest, OneIdPerBagMatchesReferenceBitForBit) {
  for (const Case& c : OneIdPerBagCases()) {
    SCOPED_TRACE(Trace(c));
    for (int threads : {1, 2}) {
      Problem p = Make(c);
      ThreadPool pool(threads);
      EXPECT_EQ(Vec(Forward(p, c, &pool)), reference::EmbeddingBagForwardRef(p.ref, p.emb)) << threads;
      const SparseOptimizerConfig cfg = ConfigOf(c.opt);
      std::vector<float> emb = p.emb, state = p.state;
      reference::EmbeddingBagUpdateRef(p.ref, Vec(p.grad_out), RefOf(cfg), c.dtype == DType::kF16, &emb, &state);
      Backward(&p, c, cfg, &pool);
      EXPECT_EQ(Embeddings(p), emb) << threads;
      EXPECT_EQ(State(p), state) << threads;
    }
  }
}

// The one-id forward gives the general path's bits: the same problem with
// its last two bags' offsets changed (the second-last bag takes both ids,
// the last none) runs the general path, and every other bag must match
// byte for byte, -0.0 rows included, and the reference's bytes.
TEST(EmbeddingBagTest, OneIdPerBagForwardEqualsTheGeneralPath) {
  for (const Case& base : OneIdPerBagCases()) {
    Case c = base;
    SCOPED_TRACE(Trace(c));
    Problem p = Make(c);
    // Negative zeros in every third row's first element (0.0f + -0.0f is +0.0f on both paths).
    const int64_t width = p.layout.row_width();
    for (int64_t r = 0; r < p.weights.size(0); r += 3) {
      if (c.dtype == DType::kF16) {
        p.weights.data<Half>()[r * width].bits = 0x8000;
      } else {
        p.weights.data<float>()[r * width] = -0.0f;
      }
    }
    ThreadPool pool(2);
    const Tensor fast = Forward(p, c, &pool);
    // Both give the reference's bytes too (a copy that kept -0.0 would not).
    for (int64_t r = 0; r < p.weights.size(0); r += 3) p.emb[r * c.dim] = -0.0f;
    const std::vector<float> ref = reference::EmbeddingBagForwardRef(p.ref, p.emb);
    ASSERT_EQ(static_cast<size_t>(fast.numel()), ref.size());
    EXPECT_EQ(0, std::memcmp(fast.data<float>(), ref.data(), ref.size() * sizeof(float)));
    Problem general = p;
    general.offsets = p.offsets.Clone();
    const int64_t bags = c.batch * c.tables;
    general.offsets.data<int64_t>()[bags - 1] = bags;  // bag bags-2 holds ids bags-2 and bags-1; the last is empty
    const Tensor slow = Forward(general, c, &pool);
    for (int64_t b = 0; b < c.batch; ++b) {
      for (int64_t t = 0; t < c.tables; ++t) {
        const int64_t q = t * c.batch + b;
        if (q >= bags - 2) continue;
        const float* f = fast.data<float>() + (b * c.tables + t) * c.dim;
        const float* s = slow.data<float>() + (b * c.tables + t) * c.dim;
        EXPECT_EQ(0, std::memcmp(f, s, c.dim * sizeof(float))) << "sample " << b << " table " << t;
      }
    }
  }
}

// With one id a bag the bad id reported is the first in id order, even when
// a chunk of samples earlier in the walk holds a later one.
TEST(EmbeddingBagTest, OneIdPerBagReportsTheFirstBadId) {
  Case c;
  c.batch = 300;
  c.tables = 9;
  c.min_bag = c.max_bag = 1;
  Problem p = Make(c);
  Tensor ids = p.ids.Clone();
  ids.data<int64_t>()[c.batch + 10] = -1;  // table 1, sample 10 (the first chunk of samples)
  ids.data<int64_t>()[200] = c.rows_per_table;  // table 0, sample 200 (a later chunk)
  ThreadPool pool(2);
  ExecContext ctx = CpuContext(0, &pool);
  Tensor out = Tensor::Empty({c.batch, c.tables * c.dim}, DType::kF32);
  const Status s =
      EmbeddingBagForward(ctx, p.layout, p.weights, p.table_offsets, ids, p.offsets, Tensor(), Pooling::kSum, &out);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("ids[200] = 7 (sample 200 of table 0)"), std::string::npos) << s.ToString();
}

// One table of 2 rows, dim 2; bags {0, 0, 1} and {0}: row 0 appears three
// times (gradient g0 + g0 + g1), row 1 once.
struct Tiny {
  EmbeddingRowLayout layout;
  Tensor weights, ids, offsets, grad_out;
};

Tiny MakeTiny(SparseOptimizer opt) {
  Tiny t;
  t.layout = EmbeddingRowLayout{2, DType::kF32, opt};
  t.weights = Tensor::Zeros({2, t.layout.row_width()}, DType::kF32);
  float* w = t.weights.data<float>();
  const int64_t rw = t.layout.row_width();
  w[0] = 1.0f;  w[1] = 2.0f;             // row 0
  w[rw] = -1.0f;  w[rw + 1] = 0.5f;      // row 1
  t.ids = Tensor::Empty({4}, DType::kI64);
  const int64_t ids[] = {0, 0, 1, 0};
  std::memcpy(t.ids.raw_data(), ids, sizeof(ids));
  t.offsets = Tensor::Empty({3}, DType::kI64);
  const int64_t offs[] = {0, 3, 4};
  std::memcpy(t.offsets.raw_data(), offs, sizeof(offs));
  t.grad_out = Tensor::Empty({2, 2}, DType::kF32);
  const float go[] = {0.5f, -1.0f, 0.25f, 2.0f};  // sample 0, sample 1
  std::memcpy(t.grad_out.raw_data(), go, sizeof(go));
  return t;
}

Status RunTiny(Tiny* t, const SparseOptimizerConfig& cfg) {
  ExecContext ctx = CpuContext();
  return EmbeddingBagBackwardUpdate(ctx, t->layout, cfg, Tensor(), t->ids, t->offsets, Tensor(), Pooling::kSum,
                                    t->grad_out, &t->weights);
}

TEST(EmbeddingBagTest, SgdByHand) {
  Tiny t = MakeTiny(SparseOptimizer::kSgd);
  SparseOptimizerConfig cfg;
  cfg.lr = 0.5f;
  ASSERT_TRUE(RunTiny(&t, cfg).ok());
  // Row 0: g = 2 * (0.5, -1) + (0.25, 2) = (1.25, 0); w = (1, 2) - 0.5 g.
  const float* w = t.weights.data<float>();
  EXPECT_EQ(w[0], 0.375f);
  EXPECT_EQ(w[1], 2.0f);
  // Row 1: g = (0.5, -1); w = (-1, 0.5) - 0.5 g.
  EXPECT_EQ(w[2], -1.25f);
  EXPECT_EQ(w[3], 1.0f);
}

TEST(EmbeddingBagTest, RowwiseAdagradByHand) {
  Tiny t = MakeTiny(SparseOptimizer::kRowwiseAdagrad);
  SparseOptimizerConfig cfg;
  cfg.kind = SparseOptimizer::kRowwiseAdagrad;
  cfg.lr = 0.5f;
  cfg.eps = 0.0f + 1e-30f;
  ASSERT_TRUE(RunTiny(&t, cfg).ok());
  const float* w = t.weights.data<float>();
  // Row 0 appears three times but is updated once: g = (1.25, 0),
  // s = (1.5625 + 0) / 2 = 0.78125 (two or three updates would add more),
  // w -= 0.5 g / sqrt(s).
  EXPECT_FLOAT_EQ(w[2], 0.78125f);
  EXPECT_FLOAT_EQ(w[0], 1.0f - 0.5f * 1.25f / std::sqrt(0.78125f));
  EXPECT_FLOAT_EQ(w[1], 2.0f);
  // Row 1: g = (0.5, -1), s = (0.25 + 1) / 2 = 0.625.
  EXPECT_FLOAT_EQ(w[5], 0.625f);
  EXPECT_FLOAT_EQ(w[3], -1.0f - 0.5f * 0.5f / std::sqrt(0.625f));
  EXPECT_FLOAT_EQ(w[4], 0.5f + 0.5f / std::sqrt(0.625f));
}

TEST(EmbeddingBagTest, AdamFirstStepByHand) {
  Tiny t = MakeTiny(SparseOptimizer::kAdam);
  SparseOptimizerConfig cfg;
  cfg.kind = SparseOptimizer::kAdam;
  cfg.lr = 0.1f;
  cfg.step = 1;
  ASSERT_TRUE(RunTiny(&t, cfg).ok());
  const float* w = t.weights.data<float>();
  const int64_t rw = t.layout.row_width();
  // Step 1 from zero moments: m/(1-b1) = g, v/(1-b2) = g^2, so each
  // coordinate moves by lr * sign(g) (0 where g = 0).
  EXPECT_NEAR(w[0], 1.0f - 0.1f, 1e-6);
  EXPECT_EQ(w[1], 2.0f);
  EXPECT_NEAR(w[rw], -1.0f - 0.1f, 1e-6);
  EXPECT_NEAR(w[rw + 1], 0.5f + 0.1f, 1e-6);
  // m = 0.1 g, v = 0.001 g^2 beside the row.
  EXPECT_FLOAT_EQ(w[2], 0.125f);
  EXPECT_FLOAT_EQ(w[4], (1.0f - 0.999f) * 1.5625f);  // 1 - b2 as f32
}

TEST(EmbeddingBagTest, RejectsBadArguments) {
  Case c;
  Problem p = Make(c);
  ExecContext ctx = CpuContext();
  Tensor out = Tensor::Empty({c.batch, c.tables * c.dim}, DType::kF32);
  // An id out of its table's range names the position, sample and table.
  Tensor ids = p.ids.Clone();
  ids.data<int64_t>()[0] = c.rows_per_table;
  Status s = EmbeddingBagForward(ctx, p.layout, p.weights, p.table_offsets, ids, p.offsets, Tensor(), Pooling::kSum,
                                 &out);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("ids[0] = 7"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("table 0"), std::string::npos) << s.ToString();
  s = EmbeddingBagBackwardUpdate(ctx, p.layout, SparseOptimizerConfig{}, p.table_offsets, ids, p.offsets, Tensor(),
                                 Pooling::kSum, p.grad_out, &p.weights);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.ToString();
  // Decreasing offsets, twice: the message names the first decrease.
  Tensor offsets = p.offsets.Clone();
  int64_t* o = offsets.data<int64_t>();
  const int64_t last = offsets.size(0) - 2;
  o[2] = o[1] - 1;
  o[last] = o[last - 1] - 1;
  ASSERT_GT(last, 3);
  if (o[2] >= 0) {
    s = EmbeddingBagForward(ctx, p.layout, p.weights, p.table_offsets, p.ids, offsets, Tensor(), Pooling::kSum,
                            &out);
    EXPECT_NE(s.message().find("must not decrease: offsets[2] = " + std::to_string(o[2]) + " < offsets[1]"),
              std::string::npos)
        << s.ToString();
  }
  // Wrong number of offsets for the output's shape.
  Tensor short_offsets = p.offsets.Slice(0, 0, p.offsets.size(0) - 1);
  s = EmbeddingBagForward(ctx, p.layout, p.weights, p.table_offsets, p.ids, short_offsets, Tensor(), Pooling::kSum,
                          &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // Per-sample weights with mean pooling.
  Tensor psw = Tensor::Zeros({p.ids.size(0)}, DType::kF32);
  s = EmbeddingBagForward(ctx, p.layout, p.weights, p.table_offsets, p.ids, p.offsets, psw, Pooling::kMean, &out);
  EXPECT_NE(s.message().find("sum pooling"), std::string::npos) << s.ToString();
  // The optimizer must be the one whose state the rows hold.
  SparseOptimizerConfig adam;
  adam.kind = SparseOptimizer::kAdam;
  s = EmbeddingBagBackwardUpdate(ctx, p.layout, adam, p.table_offsets, p.ids, p.offsets, Tensor(), Pooling::kSum,
                                 p.grad_out, &p.weights);
  EXPECT_NE(s.message().find("rows hold sgd state"), std::string::npos) << s.ToString();
  // Rows of the wrong width.
  Tensor narrow = Tensor::Zeros({p.weights.size(0), c.dim - 1}, DType::kF32);
  s = EmbeddingBagForward(ctx, p.layout, narrow, p.table_offsets, p.ids, p.offsets, Tensor(), Pooling::kSum, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // Table offsets: decreasing, or past the weights' rows.
  Tensor to = p.table_offsets.Clone();
  to.data<int64_t>()[1] = to.data<int64_t>()[2] + 1;
  s = EmbeddingBagForward(ctx, p.layout, p.weights, to, p.ids, p.offsets, Tensor(), Pooling::kSum, &out);
  EXPECT_NE(s.message().find("table_offsets must not decrease (table 1"), std::string::npos) << s.ToString();
  to = p.table_offsets.Clone();
  to.data<int64_t>()[c.tables] = p.weights.size(0) + 1;
  s = EmbeddingBagForward(ctx, p.layout, p.weights, to, p.ids, p.offsets, Tensor(), Pooling::kSum, &out);
  EXPECT_NE(s.message().find("exceeds the " + std::to_string(p.weights.size(0)) + " rows"), std::string::npos)
      << s.ToString();
  EXPECT_FALSE(ParseSparseOptimizer("adagrad").ok());
  EXPECT_EQ(ParseSparseOptimizer("rowwise-adagrad").value(), SparseOptimizer::kRowwiseAdagrad);
}

}  // namespace
}  // namespace foresight::kernels::test
