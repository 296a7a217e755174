// The link-prediction scorer's gradients against finite differences (every
// model, both corruption sides, pair and many-candidate scores), and
// filtered ranking on hand-made embeddings, and the filter made by a pass
// over the triple arrays against an in-memory index of every triple
// (trainer/src/link_*.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>
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
  ASSERT_OK(EvaluateRanking(CpuContext(0, &pool), sc, ents, rels, 6, triples,
                            QueryFilter::Build(CpuContext(0, &pool), known, triples, {}), {}, &m));
  // tail rank 1 + 2 + 0.5 = 3.5; head rank 1 + 4 = 5.
  EXPECT_EQ(m.queries, 2);
  EXPECT_NEAR(m.mrr, (1 / 3.5 + 1 / 5.0) / 2, 1e-12);
  EXPECT_EQ(m.hits1, 0.0);
  EXPECT_EQ(m.hits3, 0.0);
  EXPECT_EQ(m.hits10, 1.0);

  // Filtered: with (0, 0, 1) also known, entity 1 leaves the tail ranking.
  std::vector<int64_t> more = {0, 0, 1};
  known.Add(Tensor::FromBlob(more.data(), {1, 3}, DType::kI64));
  ASSERT_OK(EvaluateRanking(CpuContext(0, &pool), sc, ents, rels, 6, triples,
                            QueryFilter::Build(CpuContext(0, &pool), known, triples, {}), {}, &m));
  EXPECT_NEAR(m.mrr, (1 / 2.5 + 1 / 5.0) / 2, 1e-12);

  // Sampled candidates {2, 5}: tail rank 1 + 1 (entity 2), head 1 + 1.
  ASSERT_OK(EvaluateRanking(CpuContext(0, &pool), sc, ents, rels, 6, triples,
                            QueryFilter::Build(CpuContext(0, &pool), known, triples, {2, 5}), {2, 5}, &m));
  EXPECT_NEAR(m.mrr, 0.5, 1e-12);
}

// i64 [n, 3] triples over `entities` entities and `relations` relations;
// a tenth name entity 0 (a hub), so some queries have many known answers.
std::vector<int64_t> RandomTriples(int64_t n, int64_t entities, int64_t relations, uint64_t seed) {
  const RngKey key = RngKey::FromSeed(seed);
  std::vector<int64_t> t(static_cast<size_t>(3 * n));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t u = static_cast<uint64_t>(i);
    t[3 * i] = key.Below(10, u, 0) == 0 ? 0 : static_cast<int64_t>(key.Below(static_cast<uint64_t>(entities), u, 1));
    t[3 * i + 1] = static_cast<int64_t>(key.Below(static_cast<uint64_t>(relations), u, 2));
    t[3 * i + 2] = static_cast<int64_t>(key.Below(static_cast<uint64_t>(entities), u, 3));
  }
  return t;
}

TEST(LinkRankingTest, FilterFromTheArraysEqualsAnInMemoryIndexOfEveryTriple) {
  // 150,000 known triples (more than one scan block) in three arrays, 300
  // evaluation triples among them. The reference is the old in-memory
  // index: a map from (entity, relation) to every known answer.
  constexpr int64_t kEntities = 500, kRelations = 3;
  std::vector<int64_t> train = RandomTriples(150000, kEntities, kRelations, 1);
  std::vector<int64_t> val = RandomTriples(300, kEntities, kRelations, 2);
  std::vector<int64_t> test = RandomTriples(40, kEntities, kRelations, 3);
  const Tensor tt = Tensor::FromBlob(train.data(), {150000, 3}, DType::kI64);
  const Tensor vt = Tensor::FromBlob(val.data(), {300, 3}, DType::kI64);
  const Tensor st = Tensor::FromBlob(test.data(), {40, 3}, DType::kI64);
  KnownTriples known(kRelations);
  known.Add(tt);
  known.Add(vt);
  known.Add(st);
  std::map<std::pair<int64_t, int64_t>, std::set<int64_t>> tails, heads;
  for (const std::vector<int64_t>* a : {&train, &val, &test}) {
    for (size_t i = 0; i < a->size(); i += 3) {
      tails[{(*a)[i], (*a)[i + 1]}].insert((*a)[i + 2]);
      heads[{(*a)[i + 2], (*a)[i + 1]}].insert((*a)[i]);
    }
  }
  // DistMult of dim 1 on small integers: every score is exact, and ties
  // are common (rank counts them half).
  ASSERT_OK_AND_ASSIGN(LinkScorer sc, LinkScorer::Create("distmult", 1, 0.0f));
  auto value = [](int64_t e) { return static_cast<float>(e % 7 - 3); };
  EmbeddingReader ents = [&](const std::vector<int64_t>& keys, float* out) {
    for (size_t i = 0; i < keys.size(); ++i) out[i] = value(keys[i]);
    return Status::OK();
  };
  EmbeddingReader rels = [](const std::vector<int64_t>& keys, float* out) {
    for (size_t i = 0; i < keys.size(); ++i) out[i] = static_cast<float>(keys[i] + 1);
    return Status::OK();
  };
  const std::vector<int64_t> sampled = {3, 17, 40, 41, 99, 120, 256, 257, 300, 499};
  for (const std::vector<int64_t>& candidates : {std::vector<int64_t>{}, sampled}) {
    // Reference ranks over the candidates, every known answer but the true
    // one left out (the true one is ranked, never counted against itself).
    std::vector<int64_t> cand = candidates;
    if (cand.empty()) {
      for (int64_t e = 0; e < kEntities; ++e) cand.push_back(e);
    }
    double mrr = 0, hits1 = 0, hits10 = 0;
    for (size_t i = 0; i < val.size(); i += 3) {
      const int64_t h = val[i], r = val[i + 1], t = val[i + 2];
      const float rv = static_cast<float>(r + 1);
      for (int side = 0; side < 2; ++side) {
        const int64_t answer = side == 0 ? t : h, other = side == 0 ? h : t;
        const std::set<int64_t>& filtered = side == 0 ? tails[{h, r}] : heads[{t, r}];
        const float truth = value(other) * rv * value(answer);
        double rank = 1;
        for (int64_t e : cand) {
          if (e == answer || filtered.count(e) != 0) continue;
          const float s = value(other) * rv * value(e);
          rank += s > truth ? 1.0 : s == truth ? 0.5 : 0.0;
        }
        mrr += 1 / rank;
        hits1 += rank <= 1;
        hits10 += rank <= 10;
      }
    }
    const double nq = static_cast<double>(2 * 300);
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      const ExecContext ctx = CpuContext(0, &pool);
      const QueryFilter f = QueryFilter::Build(ctx, known, vt, candidates);
      ASSERT_EQ(f.queries(), 600);
      // Each query's filter: the reference's answers among the candidates.
      for (int64_t q = 0; q < 600; ++q) {
        const int64_t i = q % 300;
        const int64_t* v = &val[static_cast<size_t>(3 * i)];
        const std::set<int64_t>& all = q < 300 ? tails[{v[0], v[1]}] : heads[{v[2], v[1]}];
        std::set<int64_t> want;
        for (int64_t e : all) {
          if (candidates.empty() || std::binary_search(candidates.begin(), candidates.end(), e)) want.insert(e);
        }
        EXPECT_EQ(std::set<int64_t>(f.begin(q), f.end(q)), want) << "query " << q << ", " << threads << " threads";
      }
      RankMetrics m;
      ASSERT_OK(EvaluateRanking(ctx, sc, ents, rels, kEntities, vt, f, candidates, &m));
      EXPECT_NEAR(m.mrr, mrr / nq, 1e-12) << candidates.size() << " candidates, " << threads << " threads";
      EXPECT_NEAR(m.hits1, hits1 / nq, 1e-12);
      EXPECT_NEAR(m.hits10, hits10 / nq, 1e-12);
    }
  }
  // A filter made for other triples is refused.
  ThreadPool pool(1);
  RankMetrics m;
  const QueryFilter other = QueryFilter::Build(CpuContext(0, &pool), known, st, {});
  testing::ExpectErrorContains(EvaluateRanking(CpuContext(0, &pool), sc, ents, rels, kEntities, vt, other, {}, &m),
                               "filter of other triples", {"filter was built for 80 queries", "600"});
}

TEST(LinkRankingTest, SampledCandidatesAreDistinctSortedAndSeeded) {
  const std::vector<int64_t> a = SampleCandidates(5, 0, 1000, 100);
  ASSERT_EQ(a.size(), 100u);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), 100u);
  EXPECT_EQ(SampleCandidates(5, 0, 1000, 100), a);
  EXPECT_NE(SampleCandidates(5, 1, 1000, 100), a);  // the test split's draw
  EXPECT_TRUE(SampleCandidates(5, 0, 1000, 0).empty());     // every entity
  EXPECT_TRUE(SampleCandidates(5, 0, 1000, 1000).empty());  // as many as there are
}

}  // namespace
}  // namespace foresight::trainer::internal
