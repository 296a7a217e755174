#include <vector>

#include "foresight/kernels/ops.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

using test::RandomF32;
using test::ToDouble;
using test::ToVec;

struct Graph {
  reference::RefCsr ref;
  Csr csr, csr_t;
  Tensor perm;
};

Graph MakeGraph(int64_t num_dst, int64_t num_src, uint64_t seed, DType idt) {
  Graph g;
  g.ref = test::RandomRefCsr(num_dst, num_src, 7, seed);
  g.csr = test::FromRef(g.ref, idt);
  EXPECT_OK(TransposeCsr(CpuContext(), g.csr, &g.csr_t, &g.perm));
  return g;
}

Tensor FromDouble(const std::vector<double>& v, const Shape& shape) {
  Tensor t = Tensor::Empty(shape, DType::kF32);
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = static_cast<float>(v[i]);
  return t;
}

TEST(GatTest, ForwardsMatchReferenceAndThreadCounts) {
  test::TwoPools pools;
  const int64_t nd = 200, ns = 500, h = 3, d = 16;
  for (DType idt : {DType::kI32, DType::kI64}) {
    Graph g = MakeGraph(nd, ns, 1, idt);
    const int64_t e = g.csr.num_edges();
    Tensor el = RandomF32({ns, h}, 2), er = RandomF32({nd, h}, 3);
    Tensor s1 = Tensor::Empty({e, h}, DType::kF32), s3 = Tensor::Empty({e, h}, DType::kF32);
    ASSERT_OK(GatEdgeScores(pools.ctx1, g.csr, el, er, 0.2f, &s1));
    ASSERT_OK(GatEdgeScores(pools.ctx3, g.csr, el, er, 0.2f, &s3));
    EXPECT_TRUE(test::BitwiseEqual(s1, s3));
    test::ExpectClose(ToVec(s1), reference::GatScores<double>(g.ref, ToDouble(el), ToDouble(er), h, 0.2), 1e-6,
                      1e-6, "GatEdgeScores");

    Tensor a1 = Tensor::Empty({e, h}, DType::kF32), a3 = Tensor::Empty({e, h}, DType::kF32);
    ASSERT_OK(EdgeSoftmax(pools.ctx1, g.csr, s1, &a1));
    ASSERT_OK(EdgeSoftmax(pools.ctx3, g.csr, s1, &a3));
    EXPECT_TRUE(test::BitwiseEqual(a1, a3));
    test::ExpectClose(ToVec(a1), reference::EdgeSoftmax<double>(g.ref, ToDouble(s1), h), 1e-5, 1e-6,
                      "EdgeSoftmax");

    Tensor x = RandomF32({ns, h, d}, 4);
    Tensor o1 = Tensor::Empty({nd, h, d}, DType::kF32), o3 = Tensor::Empty({nd, h, d}, DType::kF32);
    ASSERT_OK(SpmmEdgeHeads(pools.ctx1, g.csr, a1, x, &o1));
    ASSERT_OK(SpmmEdgeHeads(pools.ctx3, g.csr, a1, x, &o3));
    EXPECT_TRUE(test::BitwiseEqual(o1, o3));
    test::ExpectClose(ToVec(o1), reference::SpmmEdgeHeads<double>(g.ref, ToDouble(a1), ToDouble(x), h, d), 1e-5,
                      1e-5, "SpmmEdgeHeads");

    // Backwards: thread-count independence.
    Tensor go = RandomF32({nd, h, d}, 5);
    Tensor ga1 = Tensor::Empty({e, h}, DType::kF32), ga3 = Tensor::Empty({e, h}, DType::kF32);
    Tensor gx1 = Tensor::Empty({ns, h, d}, DType::kF32), gx3 = Tensor::Empty({ns, h, d}, DType::kF32);
    ASSERT_OK(SpmmEdgeHeadsBackward(pools.ctx1, g.csr, g.csr_t, g.perm, a1, x, go, &ga1, &gx1));
    ASSERT_OK(SpmmEdgeHeadsBackward(pools.ctx3, g.csr, g.csr_t, g.perm, a1, x, go, &ga3, &gx3));
    EXPECT_TRUE(test::BitwiseEqual(ga1, ga3));
    EXPECT_TRUE(test::BitwiseEqual(gx1, gx3));
    Tensor gs1 = Tensor::Empty({e, h}, DType::kF32), gs3 = Tensor::Empty({e, h}, DType::kF32);
    ASSERT_OK(EdgeSoftmaxBackward(pools.ctx1, g.csr, a1, ga1, &gs1));
    ASSERT_OK(EdgeSoftmaxBackward(pools.ctx3, g.csr, a1, ga1, &gs3));
    EXPECT_TRUE(test::BitwiseEqual(gs1, gs3));
    Tensor gl1 = Tensor::Empty({ns, h}, DType::kF32), gl3 = Tensor::Empty({ns, h}, DType::kF32);
    Tensor gr1 = Tensor::Empty({nd, h}, DType::kF32), gr3 = Tensor::Empty({nd, h}, DType::kF32);
    ASSERT_OK(GatEdgeScoresBackward(pools.ctx1, g.csr, g.csr_t, g.perm, el, er, 0.2f, gs1, &gl1, &gr1));
    ASSERT_OK(GatEdgeScoresBackward(pools.ctx3, g.csr, g.csr_t, g.perm, el, er, 0.2f, gs1, &gl3, &gr3));
    EXPECT_TRUE(test::BitwiseEqual(gl1, gl3));
    EXPECT_TRUE(test::BitwiseEqual(gr1, gr3));
  }
}

// The whole GAT attention chain, checked end to end and per op against
// central differences of the double forward.
TEST(GatTest, GradientsMatchFiniteDifferences) {
  auto ctx = CpuContext();
  const int64_t nd = 8, ns = 14, h = 2, d = 3;
  const float slope = 0.2f;
  Graph g = MakeGraph(nd, ns, 7, DType::kI64);
  const int64_t e = g.csr.num_edges();
  Tensor el = RandomF32({ns, h}, 8), er = RandomF32({nd, h}, 9), x = RandomF32({ns, h, d}, 10);
  Tensor s = Tensor::Empty({e, h}, DType::kF32), a = Tensor::Empty({e, h}, DType::kF32);
  Tensor o = Tensor::Empty({nd, h, d}, DType::kF32);
  ASSERT_OK(GatEdgeScores(ctx, g.csr, el, er, slope, &s));
  ASSERT_OK(EdgeSoftmax(ctx, g.csr, s, &a));
  ASSERT_OK(SpmmEdgeHeads(ctx, g.csr, a, x, &o));
  const auto r = test::RandomWeights(nd * h * d, 11);
  Tensor go = FromDouble(r, {nd, h, d});
  const auto rg = ToDouble(go);

  Tensor ga = Tensor::Empty({e, h}, DType::kF32), gx = Tensor::Empty({ns, h, d}, DType::kF32);
  Tensor gs = Tensor::Empty({e, h}, DType::kF32);
  Tensor gl = Tensor::Empty({ns, h}, DType::kF32), gr = Tensor::Empty({nd, h}, DType::kF32);
  ASSERT_OK(SpmmEdgeHeadsBackward(ctx, g.csr, g.csr_t, g.perm, a, x, go, &ga, &gx));
  ASSERT_OK(EdgeSoftmaxBackward(ctx, g.csr, a, ga, &gs));
  ASSERT_OK(GatEdgeScoresBackward(ctx, g.csr, g.csr_t, g.perm, el, er, slope, gs, &gl, &gr));

  const auto vel = ToDouble(el), ver = ToDouble(er), vx = ToDouble(x);
  auto chain = [&](const std::vector<double>& l, const std::vector<double>& rr, const std::vector<double>& xx) {
    const auto sc = reference::GatScores<double>(g.ref, l, rr, h, slope);
    const auto al = reference::EdgeSoftmax<double>(g.ref, sc, h);
    return test::Dot(reference::SpmmEdgeHeads<double>(g.ref, al, xx, h, d), rg);
  };
  std::vector<size_t> cl, cr, cx;
  const auto nl = test::NumericGrad([&](const std::vector<double>& v) { return chain(v, ver, vx); }, vel, 1e-4, 1, &cl);
  const auto nr = test::NumericGrad([&](const std::vector<double>& v) { return chain(vel, v, vx); }, ver, 1e-4, 1, &cr);
  const auto nx = test::NumericGrad([&](const std::vector<double>& v) { return chain(vel, ver, v); }, vx, 1e-4, 1, &cx);
  test::ExpectGradClose(ToVec(gl), nl, cl, 2e-3, 1e-5, "d/d el");
  test::ExpectGradClose(ToVec(gr), nr, cr, 2e-3, 1e-5, "d/d er");
  test::ExpectGradClose(ToVec(gx), nx, cx, 1e-4, 1e-5, "d/d x");

  // Each op alone: d sum(R * op) / d input.
  const auto va = ToDouble(a), vs = ToDouble(s);
  std::vector<size_t> ca;
  const auto na = test::NumericGrad(
      [&](const std::vector<double>& v) { return test::Dot(reference::SpmmEdgeHeads<double>(g.ref, v, vx, h, d), rg); },
      va, 1e-4, 1, &ca);
  test::ExpectGradClose(ToVec(ga), na, ca, 1e-4, 1e-5, "SpmmEdgeHeads d/d alpha");
  const auto rga = ToDouble(ga);
  std::vector<size_t> cs;
  const auto ns2 = test::NumericGrad(
      [&](const std::vector<double>& v) { return test::Dot(reference::EdgeSoftmax<double>(g.ref, v, h), rga); }, vs,
      1e-4, 1, &cs);
  test::ExpectGradClose(ToVec(gs), ns2, cs, 1e-3, 1e-5, "EdgeSoftmax d/d scores");
}

TEST(GatTest, ErrorsNameTheProblem) {
  auto ctx = CpuContext();
  Graph g = MakeGraph(4, 6, 1, DType::kI64);
  const int64_t e = g.csr.num_edges();
  Tensor el = RandomF32({6, 2}, 1), er = RandomF32({4, 3}, 2), s = Tensor::Empty({e, 2}, DType::kF32);
  EXPECT_ERROR_CONTAINS(GatEdgeScores(ctx, g.csr, el, er, 0.2f, &s), "GatEdgeScores: er", "[4, 2]", "[4, 3]");
  Tensor a = RandomF32({e, 2}, 3), x = RandomF32({6, 3, 4}, 4), o = Tensor::Empty({4, 2, 4}, DType::kF32);
  EXPECT_ERROR_CONTAINS(SpmmEdgeHeads(ctx, g.csr, a, x, &o), "SpmmEdgeHeads: x", "[6, 2, 4]", "[6, 3, 4]");
  Tensor sbad = RandomF32({e + 1, 2}, 5), out = Tensor::Empty({e + 1, 2}, DType::kF32);
  EXPECT_ERROR_CONTAINS(EdgeSoftmax(ctx, g.csr, sbad, &out), "EdgeSoftmax: scores");
  Tensor perm_bad = Tensor::Zeros({e + 2}, DType::kI64);
  Tensor gl = Tensor::Empty({6, 2}, DType::kF32);
  Tensor er2 = RandomF32({4, 2}, 2);
  EXPECT_ERROR_CONTAINS(
      GatEdgeScoresBackward(ctx, g.csr, g.csr_t, perm_bad, el, er2, 0.2f, s, &gl, nullptr),
      "GatEdgeScoresBackward: edge_perm", std::string("[") + std::to_string(e) + "]");
}

}  // namespace
}  // namespace foresight::kernels
