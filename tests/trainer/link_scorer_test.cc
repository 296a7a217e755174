// The link-prediction scorer's gradients against finite differences (every
// model, both corruption sides, pair and many-candidate scores), and
// filtered ranking on hand-made embeddings (trainer/src/link_*.h).
#include <cmath>
#include <vector>

#include "foresight/core/rng.h"
#include "link_eval.h"
#include "link_scorer.h"
#include "testing/testing.h"

namespace foresight::trainer::internal {
namespace {

std::vector<float> Random(int64_t n, uint64_t seed) {
  const RngKey key = RngKey::FromSeed(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = key.Uniform(static_cast<uint64_t>(i), 0) - 0.5f;
  return v;
}

// The total score sum_ij w_ij s(q(a_i, r_i), x_j) + sum_i u_i s(q(a_i, r_i), y_i).
double Objective(const LinkScorer& sc, LinkSide side, const std::vector<float>& a, const std::vector<float>& r,
                 const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& w,
                 const std::vector<float>& u, int64_t n, int64_t m) {
  const int64_t d = sc.dim();
  ThreadPool pool(2);
  const ExecContext ctx = CpuContext(0, &pool);
  Tensor q = Tensor::Empty({n, d}, DType::kF32);
  for (int64_t i = 0; i < n; ++i) sc.Query(side, &a[i * d], &r[i * d], q.data<float>() + i * d);
  std::vector<float> xv = x;
  Tensor xt = Tensor::FromBlob(xv.data(), {m, d}, DType::kF32);
  Tensor s = Tensor::Empty({n, m}, DType::kF32);
  EXPECT_OK(sc.Scores(ctx, q, xt, &s));
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) total += w[i * m + j] * s.data<float>()[i * m + j];
    total += u[i] * sc.Pair(q.data<float>() + i * d, &y[i * d]);
  }
  return total;
}

class LinkScorerTest : public ::testing::TestWithParam<const char*> {};

TEST_P(LinkScorerTest, GradientsMatchFiniteDifferences) {
  const int64_t n = 3, m = 4, d = 6;
  ASSERT_OK_AND_ASSIGN(LinkScorer sc, LinkScorer::Create(GetParam(), d, 1.5f));
  for (LinkSide side : {LinkSide::kTail, LinkSide::kHead}) {
    std::vector<float> a = Random(n * d, 1), r = Random(n * d, 2), x = Random(m * d, 3), y = Random(n * d, 4);
    const std::vector<float> w = Random(n * m, 5), u = Random(n, 6);
    // Analytic: dS = w, dpos = u.
    ThreadPool pool(2);
    const ExecContext ctx = CpuContext(0, &pool);
    Tensor q = Tensor::Empty({n, d}, DType::kF32);
    for (int64_t i = 0; i < n; ++i) sc.Query(side, &a[i * d], &r[i * d], q.data<float>() + i * d);
    Tensor xt = Tensor::FromBlob(x.data(), {m, d}, DType::kF32);
    Tensor s = Tensor::Empty({n, m}, DType::kF32);
    ASSERT_OK(sc.Scores(ctx, q, xt, &s));
    std::vector<float> wv = w;
    Tensor ds = Tensor::FromBlob(wv.data(), {n, m}, DType::kF32);
    Tensor dq = Tensor::Zeros({n, d}, DType::kF32), dx = Tensor::Zeros({m, d}, DType::kF32);
    ASSERT_OK(sc.ScoresBackward(ctx, q, xt, s, &ds, &dq, &dx));
    std::vector<float> da(n * d, 0.0f), dr(n * d, 0.0f), dy(n * d, 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      sc.PairBackward(q.data<float>() + i * d, &y[i * d], u[i], dq.data<float>() + i * d, &dy[i * d]);
      sc.QueryBackward(side, &a[i * d], &r[i * d], dq.data<float>() + i * d, &da[i * d], &dr[i * d]);
    }
    const float h = 1e-3f;
    auto check = [&](std::vector<float>* v, const std::vector<float>& grad, const char* what) {
      for (size_t k = 0; k < v->size(); ++k) {
        const float keep = (*v)[k];
        (*v)[k] = keep + h;
        const double up = Objective(sc, side, a, r, x, y, w, u, n, m);
        (*v)[k] = keep - h;
        const double down = Objective(sc, side, a, r, x, y, w, u, n, m);
        (*v)[k] = keep;
        EXPECT_NEAR(grad[k], (up - down) / (2 * h), 2e-3)
            << GetParam() << (side == LinkSide::kTail ? " tail " : " head ") << what << "[" << k << "]";
      }
    };
    check(&a, da, "anchor");
    if (sc.uses_relation()) check(&r, dr, "relation");
    check(&y, dy, "true candidate");
    check(&x, std::vector<float>(dx.data<float>(), dx.data<float>() + m * d), "candidates");
  }
}

TEST_P(LinkScorerTest, QueryScoresTheTripleEitherWay) {
  // Scoring (h, r, t) from the tail side and from the head side agrees.
  const int64_t d = 8;
  ASSERT_OK_AND_ASSIGN(LinkScorer sc, LinkScorer::Create(GetParam(), d, 2.0f));
  const std::vector<float> h = Random(d, 7), r = Random(d, 8), t = Random(d, 9);
  std::vector<float> qt(d), qh(d);
  sc.Query(LinkSide::kTail, h.data(), r.data(), qt.data());
  sc.Query(LinkSide::kHead, t.data(), r.data(), qh.data());
  EXPECT_NEAR(sc.Pair(qt.data(), t.data()), sc.Pair(qh.data(), h.data()), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Models, LinkScorerTest, ::testing::Values("distmult", "complex", "transe", "dot"));

TEST(LinkRankingTest, FilteredRanksAndTies) {
  // dot model, dim 1: entity e has embedding v[e]; query (h, ?) scores h * x.
  const std::vector<float> v = {1.0f, 5.0f, 4.0f, 3.0f, 3.0f, -1.0f};
  ASSERT_OK_AND_ASSIGN(LinkScorer sc, LinkScorer::Create("dot", 1, 0.0f));
  EmbeddingReader ents = [&](const std::vector<int64_t>& keys, float* out) {
    for (size_t i = 0; i < keys.size(); ++i) out[i] = v[static_cast<size_t>(keys[i])];
    return Status::OK();
  };
  EmbeddingReader rels = [](const std::vector<int64_t>& keys, float* out) {
    for (size_t i = 0; i < keys.size(); ++i) out[i] = 1.0f;
    return Status::OK();
  };
  // One test triple (0, 0, 3): tail query ranks 3 (score 3) among 1 (5),
  // 2 (4), 4 (3, a tie), 5, and 0 itself (1); head query (?, 0, 3) scores
  // 3 * x: true head 0 (3) below 1, 2, 3, 4 (the true tail 3 counts: it is
  // not a known head of (?, 0, 3)).
  std::vector<int64_t> test = {0, 0, 3};
  Tensor triples = Tensor::FromBlob(test.data(), {1, 3}, DType::kI64);
  KnownTriples known(1);
  known.Add(triples);
  ThreadPool pool(2);
  RankMetrics m;
  ASSERT_OK(EvaluateRanking(CpuContext(0, &pool), sc, ents, rels, 6, triples, known, {}, &m));
  // tail rank 1 + 2 + 0.5 = 3.5; head rank 1 + 4 = 5.
  EXPECT_EQ(m.queries, 2);
  EXPECT_NEAR(m.mrr, (1 / 3.5 + 1 / 5.0) / 2, 1e-12);
  EXPECT_EQ(m.hits1, 0.0);
  EXPECT_EQ(m.hits3, 0.0);
  EXPECT_EQ(m.hits10, 1.0);

  // Filtered: with (0, 0, 1) also known, entity 1 leaves the tail ranking.
  std::vector<int64_t> more = {0, 0, 1};
  known.Add(Tensor::FromBlob(more.data(), {1, 3}, DType::kI64));
  ASSERT_OK(EvaluateRanking(CpuContext(0, &pool), sc, ents, rels, 6, triples, known, {}, &m));
  EXPECT_NEAR(m.mrr, (1 / 2.5 + 1 / 5.0) / 2, 1e-12);

  // Sampled candidates {2, 5}: tail rank 1 + 1 (entity 2), head 1 + 1.
  ASSERT_OK(EvaluateRanking(CpuContext(0, &pool), sc, ents, rels, 6, triples, known, {2, 5}, &m));
  EXPECT_NEAR(m.mrr, 0.5, 1e-12);
}

}  // namespace
}  // namespace foresight::trainer::internal
