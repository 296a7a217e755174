// DLRM's feature interaction (dot, cat) and the BCE-with-logits loss
// against naive double-precision references and central differences.
#include <cmath>
#include <cstring>
#include <tuple>
#include <vector>

#include "foresight/kernels/ops.h"
#include "interaction_paths.h"
#include "kernel_test_util.h"
#include "philox_avx512.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

using test::RandomF32;
using test::ToDouble;
using test::ToVec;

// out = [x, z_i . z_j for i > j] per sample, pairs row by row.
std::vector<double> DotReference(const std::vector<double>& x, const std::vector<double>& emb, int64_t b,
                                 int64_t t, int64_t d) {
  std::vector<double> out;
  for (int64_t s = 0; s < b; ++s) {
    auto z = [&](int64_t k, int64_t c) { return k == 0 ? x[s * d + c] : emb[s * t * d + (k - 1) * d + c]; };
    for (int64_t c = 0; c < d; ++c) out.push_back(x[s * d + c]);
    for (int64_t i = 1; i <= t; ++i) {
      for (int64_t j = 0; j < i; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) dot += z(i, c) * z(j, c);
        out.push_back(dot);
      }
    }
  }
  return out;
}

TEST(InteractionTest, DotMatchesReferenceOnAnyThreadCount) {
  test::TwoPools pools;
  const int64_t b = 300, t = 5, d = 8;
  Tensor x = RandomF32({b, d}, 1), emb = RandomF32({b, t * d}, 2);
  const int64_t w = InteractionWidth(Interaction::kDot, t, d, d);
  ASSERT_EQ(w, d + 15);
  Tensor o1 = Tensor::Empty({b, w}, DType::kF32), o3 = Tensor::Empty({b, w}, DType::kF32);
  ASSERT_OK(FeatureInteraction(pools.ctx1, Interaction::kDot, t, x, emb, &o1));
  ASSERT_OK(FeatureInteraction(pools.ctx3, Interaction::kDot, t, x, emb, &o3));
  EXPECT_TRUE(test::BitwiseEqual(o1, o3));
  test::ExpectClose(ToVec(o1), DotReference(ToDouble(x), ToDouble(emb), b, t, d), 1e-5, 1e-5, "dot");
}

// Each pair is the f32 dot summed from 0.0f in ascending position, one
// rounded product at a time (the kernel vectorises across pairs, never
// within one): the bits of that scalar loop, at DLRM's shape, an odd one,
// and one of more than 32 vectors (the path without the register block).
TEST(InteractionTest, DotEqualsAScalarAscendingSumBitForBit) {
  test::TwoPools pools;
  // {5, 81, 8} after {7, 40, 16}: the same scratch size (656 floats) with
  // more vectors, so a buffer kept from the call before must still fit.
  for (const auto& [b, t, d] :
       {std::tuple<int64_t, int64_t, int64_t>{37, 26, 64}, {11, 5, 3}, {7, 40, 16}, {5, 81, 8}}) {
    Tensor x = RandomF32({b, d}, 8), emb = RandomF32({b, t * d}, 9);
    const int64_t w = InteractionWidth(Interaction::kDot, t, d, d);
    Tensor o1 = Tensor::Empty({b, w}, DType::kF32), o3 = Tensor::Empty({b, w}, DType::kF32);
    ASSERT_OK(FeatureInteraction(pools.ctx1, Interaction::kDot, t, x, emb, &o1));
    ASSERT_OK(FeatureInteraction(pools.ctx3, Interaction::kDot, t, x, emb, &o3));
    EXPECT_TRUE(test::BitwiseEqual(o1, o3));
    const float* px = x.data<float>();
    const float* pe = emb.data<float>();
    const float* po = o1.data<float>();
    for (int64_t s = 0; s < b; ++s) {
      auto z = [&](int64_t k) { return k == 0 ? px + s * d : pe + s * t * d + (k - 1) * d; };
      int64_t at = s * w + d;
      for (int64_t i = 1; i <= t; ++i) {
        for (int64_t j = 0; j < i; ++j, ++at) {
          float dot = 0.0f;
          for (int64_t c = 0; c < d; ++c) {
            volatile float p = z(i)[c] * z(j)[c];  // rounded, as the kernels' -ffp-contract=off builds do
            dot += p;
          }
          ASSERT_EQ(std::memcmp(&po[at], &dot, sizeof(float)), 0)
              << "sample " << s << " pair (" << i << ", " << j << "): " << po[at] << " vs " << dot;
        }
      }
    }
  }
}

// The dot backward: each element of d z_k adds g(k, j) * z_j in ascending j
// (from x's own gradient for z_0, from 0.0f for the tables), one rounded
// product at a time: the bits of that scalar loop, with and without a
// remainder past the kernel's blocks of 32 elements.
TEST(InteractionTest, DotBackwardEqualsAScalarAscendingSumBitForBit) {
  test::TwoPools pools;
  for (const auto& [b, t, d] :
       {std::tuple<int64_t, int64_t, int64_t>{37, 26, 64}, {11, 5, 3}, {7, 40, 16}, {5, 4, 40}}) {
    Tensor x = RandomF32({b, d}, 10), emb = RandomF32({b, t * d}, 11);
    const int64_t w = InteractionWidth(Interaction::kDot, t, d, d);
    Tensor g = RandomF32({b, w}, 12);
    Tensor gx1 = Tensor::Empty({b, d}, DType::kF32), ge1 = Tensor::Empty({b, t * d}, DType::kF32);
    Tensor gx3 = Tensor::Empty({b, d}, DType::kF32), ge3 = Tensor::Empty({b, t * d}, DType::kF32);
    // The outputs hold NaN before: the kernel must overwrite every element
    // (its sums start in registers, not from memory it zeroed).
    for (Tensor* out : {&gx1, &ge1, &gx3, &ge3}) ASSERT_OK(out->Fill(NAN));
    ASSERT_OK(FeatureInteractionBackward(pools.ctx1, Interaction::kDot, t, x, emb, g, &gx1, &ge1));
    ASSERT_OK(FeatureInteractionBackward(pools.ctx3, Interaction::kDot, t, x, emb, g, &gx3, &ge3));
    EXPECT_TRUE(test::BitwiseEqual(gx1, gx3));
    EXPECT_TRUE(test::BitwiseEqual(ge1, ge3));
    const float* px = x.data<float>();
    const float* pe = emb.data<float>();
    const float* pg = g.data<float>();
    for (int64_t s = 0; s < b; ++s) {
      auto z = [&](int64_t k) { return k == 0 ? px + s * d : pe + s * t * d + (k - 1) * d; };
      const float* gp = pg + s * w + d;
      for (int64_t k = 0; k <= t; ++k) {
        const float* got = k == 0 ? gx1.data<float>() + s * d : ge1.data<float>() + s * t * d + (k - 1) * d;
        for (int64_t c = 0; c < d; ++c) {
          float want = k == 0 ? pg[s * w + c] : 0.0f;
          for (int64_t j = 0; j <= t; ++j) {
            if (j == k) continue;
            const float coef = k > j ? gp[k * (k - 1) / 2 + j] : gp[j * (j - 1) / 2 + k];
            volatile float p = coef * z(j)[c];
            want += p;
          }
          ASSERT_EQ(std::memcmp(&got[c], &want, sizeof(float)), 0)
              << "sample " << s << " z_" << k << "[" << c << "]: " << got[c] << " vs " << want;
        }
      }
    }
  }
}

TEST(InteractionTest, CatConcatenates) {
  auto ctx = CpuContext();
  const int64_t b = 4, t = 3, d = 2, e = 5;
  Tensor x = RandomF32({b, d}, 3), emb = RandomF32({b, t * e}, 4);
  Tensor out = Tensor::Empty({b, d + t * e}, DType::kF32);
  ASSERT_OK(FeatureInteraction(ctx, Interaction::kCat, t, x, emb, &out));
  for (int64_t s = 0; s < b; ++s) {
    for (int64_t c = 0; c < d; ++c) EXPECT_EQ(out.data<float>()[s * (d + t * e) + c], x.data<float>()[s * d + c]);
    for (int64_t c = 0; c < t * e; ++c) {
      EXPECT_EQ(out.data<float>()[s * (d + t * e) + d + c], emb.data<float>()[s * t * e + c]);
    }
  }
}

// Gradients of sum(out * r) for a fixed r, against central differences.
TEST(InteractionTest, BackwardMatchesNumericGradient) {
  auto ctx = CpuContext();
  for (Interaction kind : {Interaction::kDot, Interaction::kCat}) {
    const int64_t b = 3, t = 4, d = 3;
    Tensor x = RandomF32({b, d}, 5), emb = RandomF32({b, t * d}, 6);
    const int64_t w = InteractionWidth(kind, t, d, d);
    Tensor r = RandomF32({b, w}, 7);
    Tensor gx = Tensor::Empty({b, d}, DType::kF32), ge = Tensor::Empty({b, t * d}, DType::kF32);
    ASSERT_OK(FeatureInteractionBackward(ctx, kind, t, x, emb, r, &gx, &ge));
    const std::vector<double> rv = ToDouble(r);
    auto objective = [&](const std::vector<double>& xv, const std::vector<double>& ev) {
      Tensor xo = test::FromVec(std::vector<float>(xv.begin(), xv.end()), {b, d});
      Tensor eo = test::FromVec(std::vector<float>(ev.begin(), ev.end()), {b, t * d});
      std::vector<double> out;
      if (kind == Interaction::kDot) {
        out = DotReference(xv, ev, b, t, d);
      } else {
        Tensor o = Tensor::Empty({b, w}, DType::kF32);
        EXPECT_OK(FeatureInteraction(ctx, kind, t, xo, eo, &o));
        out = ToDouble(o);
      }
      double s = 0;
      for (size_t i = 0; i < out.size(); ++i) s += out[i] * rv[i];
      return s;
    };
    const std::vector<double> xv = ToDouble(x), ev = ToDouble(emb);
    std::vector<size_t> cx, ce;
    const auto nx = test::NumericGrad([&](const std::vector<double>& v) { return objective(v, ev); }, xv, 1e-3, 1, &cx);
    const auto ne = test::NumericGrad([&](const std::vector<double>& v) { return objective(xv, v); }, ev, 1e-3, 1, &ce);
    test::ExpectGradClose(ToVec(gx), nx, cx, 1e-3, 1e-4, "d / d x");
    test::ExpectGradClose(ToVec(ge), ne, ce, 1e-3, 1e-4, "d / d emb");
  }
}

TEST(InteractionTest, DotNeedsEqualWidths) {
  auto ctx = CpuContext();
  Tensor x = RandomF32({2, 3}, 1), emb = RandomF32({2, 8}, 2);
  Tensor out = Tensor::Empty({2, 3 + 3}, DType::kF32);
  const Status s = FeatureInteraction(ctx, Interaction::kDot, 2, x, emb, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("x's width (3) to equal the embedding dim (4)"), std::string::npos) << s.message();
  EXPECT_FALSE(ParseInteraction("dott").ok());
}

TEST(BceWithLogitsTest, MatchesReferenceAndIsStableForLargeLogits) {
  test::TwoPools pools;
  const int64_t n = 10000;
  Tensor z = RandomF32({n, 1}, 8, -8.0f, 8.0f);
  Tensor y = Tensor::Empty({n}, DType::kF32);
  for (int64_t i = 0; i < n; ++i) y.data<float>()[i] = static_cast<float>((i * 7) % 3 == 0);
  float l1 = 0, l3 = 0;
  Tensor g1 = Tensor::Empty({n, 1}, DType::kF32), g3 = Tensor::Empty({n, 1}, DType::kF32);
  ASSERT_OK(BceWithLogits(pools.ctx1, z, y, &l1, &g1));
  ASSERT_OK(BceWithLogits(pools.ctx3, z, y, &l3, &g3));
  EXPECT_EQ(l1, l3);
  EXPECT_TRUE(test::BitwiseEqual(g1, g3));
  double want = 0;
  std::vector<double> gwant(n);
  for (int64_t i = 0; i < n; ++i) {
    const double zi = z.data<float>()[i], yi = y.data<float>()[i], p = 1 / (1 + std::exp(-zi));
    want -= yi * std::log(p) + (1 - yi) * std::log(1 - p);
    gwant[i] = (p - yi) / n;
  }
  EXPECT_NEAR(l1, want / n, 1e-6);
  test::ExpectClose(ToVec(g1), gwant, 1e-5, 1e-9, "grad");

  // log(sigmoid(z)) in f32 would be -inf at z = -200 and 0 at z = 200.
  Tensor big = test::FromVec({200.0f, -200.0f, 200.0f, -200.0f}, {4});
  Tensor t = test::FromVec({1.0f, 0.0f, 0.0f, 1.0f}, {4});
  float loss = 0;
  Tensor g = Tensor::Empty({4}, DType::kF32);
  ASSERT_OK(BceWithLogits(pools.ctx1, big, t, &loss, &g));
  EXPECT_NEAR(loss, 100.0, 1e-4);  // two exact predictions, two wrong by 200
  EXPECT_EQ(ToVec(g), (std::vector<float>{0.0f, 0.0f, 0.25f, -0.25f}));
}

TEST(BceWithLogitsTest, RefusesMismatchedTargets) {
  auto ctx = CpuContext();
  float loss = 0;
  const Status s = BceWithLogits(ctx, RandomF32({3}, 1), RandomF32({4}, 2), &loss, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("4 targets for 3 logits"), std::string::npos) << s.message();
}

// The AVX-512 loops (taken on this CPU when it has them) and the AVX2 loops
// give the same bits, forward and backward: DLRM's shape (one 64-element
// block a vector in the backward), narrow and odd widths, a stack wider
// than the transposed layout's 32 lanes. Outputs start as NaN.
TEST(InteractionTest, Avx512AndAvx2PathsGiveTheSameBits) {
  // The dispatched entry points run the AVX-512 loops where the build has
  // them and the CPU does; the AVX2 loops (With(false)) are the reference.
  // Elsewhere both sides are the AVX2 loops, and the test checks the
  // dispatch writes the reference's bits.
#if defined(FS_HAVE_AVX512_PHILOX)
  SCOPED_TRACE(cpu::HaveAvx512() ? "dispatch: AVX-512 loops" : "dispatch: AVX2 loops (no AVX-512 on this CPU)");
#else
  SCOPED_TRACE("dispatch: AVX2 loops (built without the AVX-512 paths)");
#endif
  auto ctx = CpuContext();
  for (const auto& [b, t, d] : {std::tuple<int64_t, int64_t, int64_t>{37, 26, 64}, {11, 5, 3}, {6, 4, 40},
                                {9, 31, 64}, {5, 40, 64}, {4, 1, 64}, {7, 12, 48}}) {
    SCOPED_TRACE(::testing::Message() << b << " x " << t << " tables x " << d);
    Tensor x = RandomF32({b, d}, 20), emb = RandomF32({b, t * d}, 21);
    const int64_t w = InteractionWidth(Interaction::kDot, t, d, d);
    Tensor g = RandomF32({b, w}, 22);
    Tensor out[2], gx[2], ge[2];
    for (int dispatched = 0; dispatched < 2; ++dispatched) {
      out[dispatched] = Tensor::Empty({b, w}, DType::kF32);
      gx[dispatched] = Tensor::Empty({b, d}, DType::kF32);
      ge[dispatched] = Tensor::Empty({b, t * d}, DType::kF32);
      for (Tensor* o : {&out[dispatched], &gx[dispatched], &ge[dispatched]}) ASSERT_OK(o->Fill(NAN));
      if (dispatched == 1) {
        ASSERT_OK(cpu::FeatureInteraction(ctx, Interaction::kDot, t, x, emb, &out[1]));
        ASSERT_OK(cpu::FeatureInteractionBackward(ctx, Interaction::kDot, t, x, emb, g, &gx[1], &ge[1]));
      } else {
        ASSERT_OK(cpu::FeatureInteractionWith(false, ctx, Interaction::kDot, t, x, emb, &out[0]));
        ASSERT_OK(cpu::FeatureInteractionBackwardWith(false, ctx, Interaction::kDot, t, x, emb, g, &gx[0], &ge[0]));
      }
    }
    EXPECT_TRUE(test::BitwiseEqual(out[0], out[1]));
    EXPECT_TRUE(test::BitwiseEqual(gx[0], gx[1]));
    EXPECT_TRUE(test::BitwiseEqual(ge[0], ge[1]));
  }
}

}  // namespace
}  // namespace foresight::kernels
