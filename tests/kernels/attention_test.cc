// Varlen attention against the naive double reference (whole score matrix
// per sequence), forward and backward, causal and bidirectional, with and
// without dropout; finite differences of the op itself; packed equal to one
// sequence at a time; thread-count independence; argument errors.
#include <gtest/gtest.h>

#include <numeric>

#include "foresight/kernels/transformer.h"
#include "kernel_test_util.h"
#include "reference/transformer_reference.h"

namespace foresight::kernels::test {
namespace {

struct Case {
  std::vector<int64_t> lengths;
  int64_t heads;
  int64_t d;
  bool causal;
  float dropout;
};

std::string Name(const Case& c) {
  std::string s = std::string(c.causal ? "causal" : "bidirectional") + " heads=" + std::to_string(c.heads) +
                  " d=" + std::to_string(c.d) + " dropout=" + std::to_string(c.dropout) + " lengths=";
  for (int64_t l : c.lengths) s += std::to_string(l) + ",";
  return s;
}

Tensor CuSeqlens(const std::vector<int64_t>& lengths) {
  std::vector<int64_t> cu{0};
  for (int64_t l : lengths) cu.push_back(cu.back() + l);
  return IdsTensor(cu, DType::kI64);
}

int64_t MaxLen(const std::vector<int64_t>& lengths) {
  return lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
}

// q, k, v as column views of one fused [T, 3E] projection, as the layer
// passes them (strided rows).
struct Qkv {
  Tensor fused, q, k, v;
};

Qkv MakeQkv(int64_t tokens, int64_t width, uint64_t seed) {
  Qkv r;
  r.fused = RandomF32({tokens, 3 * width}, seed, -1.5f, 1.5f);
  r.q = r.fused.Slice(1, 0, width);
  r.k = r.fused.Slice(1, width, 2 * width);
  r.v = r.fused.Slice(1, 2 * width, 3 * width);
  return r;
}

std::vector<double> Column(const Tensor& view) {  // a strided [T, E] view as dense doubles
  std::vector<double> out;
  const float* p = view.data<float>();
  for (int64_t r = 0; r < view.size(0); ++r) {
    for (int64_t c = 0; c < view.size(1); ++c) out.push_back(p[r * view.stride(0) + c]);
  }
  return out;
}

struct Result {
  Tensor out, lse, gq, gk, gv;
};

Result RunAttention(const ExecContext& ctx, const Case& c, const Qkv& in, const Tensor& grad_out) {
  const int64_t tokens = in.q.size(0), width = in.q.size(1);
  AttentionOptions o;
  o.heads = c.heads;
  o.causal = c.causal;
  o.dropout = c.dropout;
  const Tensor cu = CuSeqlens(c.lengths);
  Result r;
  r.out = Tensor::Empty({tokens, width}, DType::kF32);
  r.lse = Tensor::Empty({c.heads, tokens}, DType::kF32);
  Status s = VarlenAttention(ctx, o, in.q, in.k, in.v, cu, MaxLen(c.lengths), &r.out, &r.lse);
  EXPECT_TRUE(s.ok()) << s.ToString();
  Tensor grads = Tensor::Empty({tokens, 3 * width}, DType::kF32);
  r.gq = grads.Slice(1, 0, width);
  r.gk = grads.Slice(1, width, 2 * width);
  r.gv = grads.Slice(1, 2 * width, 3 * width);
  if (grad_out.defined()) {
    s = VarlenAttentionBackward(ctx, o, in.q, in.k, in.v, r.out, r.lse, grad_out, cu, MaxLen(c.lengths), &r.gq,
                                &r.gk, &r.gv);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  return r;
}

reference::RefAttention RefOf(const Case& c, const ExecContext& ctx) {
  reference::RefAttention a;
  a.heads = c.heads;
  a.causal = c.causal;
  a.dropout = c.dropout;
  a.rng = ctx.rng;
  return a;
}

std::vector<int64_t> CuVec(const std::vector<int64_t>& lengths) { return IdsVec(CuSeqlens(lengths)); }

std::vector<float> Floats(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }
std::vector<float> ColumnF(const Tensor& view) { return Floats(Column(view)); }

std::vector<Case> Cases() {
  std::vector<Case> cases;
  // Several tiles (64 rows), a length that is not a multiple of the tile,
  // an empty sequence and one of a single token.
  const std::vector<int64_t> lengths{1, 70, 0, 130, 5, 64};
  for (bool causal : {false, true}) {
    for (float p : {0.0f, 0.3f}) cases.push_back({lengths, 2, 8, causal, p});
  }
  cases.push_back({{200}, 1, 16, true, 0.0f});
  cases.push_back({{3, 9}, 4, 3, false, 0.0f});
  return cases;
}

TEST(VarlenAttentionTest, MatchesNaiveReferenceForwardAndBackward) {
  TwoPools pools;
  for (const Case& c : Cases()) {
    SCOPED_TRACE(Name(c));
    const int64_t tokens = std::accumulate(c.lengths.begin(), c.lengths.end(), int64_t{0});
    const int64_t width = c.heads * c.d;
    const Qkv in = MakeQkv(tokens, width, 11);
    const Tensor go = RandomF32({tokens, width}, 12);
    const Result r = RunAttention(pools.ctx3, c, in, go);
    const auto a = RefOf(c, pools.ctx3);
    const std::vector<int64_t> cu = CuVec(c.lengths);
    const auto q = Column(in.q), k = Column(in.k), v = Column(in.v);
    ExpectClose(ToVec(r.out), reference::AttentionForward(a, q, k, v, cu, width), 1e-4, 1e-5, "out");
    std::vector<double> gq, gk, gv;
    reference::AttentionBackward(a, q, k, v, cu, width, ToDouble(go), &gq, &gk, &gv);
    ExpectClose(ColumnF(r.gq), gq, 1e-3, 1e-4, "grad_q");
    ExpectClose(ColumnF(r.gk), gk, 1e-3, 1e-4, "grad_k");
    ExpectClose(ColumnF(r.gv), gv, 1e-3, 1e-4, "grad_v");
  }
}

// The reference backward is itself the gradient of the reference forward
// (central differences in double), dropout included.
TEST(VarlenAttentionTest, ReferenceBackwardMatchesFiniteDifferences) {
  for (bool causal : {false, true}) {
    for (double p : {0.0, 0.4}) {
      SCOPED_TRACE(std::string(causal ? "causal" : "bidirectional") + " dropout=" + std::to_string(p));
      reference::RefAttention a;
      a.heads = 2;
      a.causal = causal;
      a.dropout = p;
      a.rng = RngKey::FromSeed(5);
      const std::vector<int64_t> cu{0, 3, 9, 10};
      const int64_t width = 8, tokens = 10;
      const auto q = RandomWeights(tokens * width, 1), k = RandomWeights(tokens * width, 2),
                 v = RandomWeights(tokens * width, 3), go = RandomWeights(tokens * width, 4);
      std::vector<double> gq, gk, gv;
      reference::AttentionBackward(a, q, k, v, cu, width, go, &gq, &gk, &gv);
      auto check = [&](int which, const std::vector<double>& analytic, const char* what) {
        auto f = [&](const std::vector<double>& x) {
          return Dot(reference::AttentionForward(a, which == 0 ? x : q, which == 1 ? x : k, which == 2 ? x : v, cu,
                                                 width),
                     go);
        };
        std::vector<size_t> checked;
        const auto num = NumericGrad(f, which == 0 ? q : which == 1 ? k : v, 1e-5, 1, &checked);
        ExpectGradClose(Floats(analytic), num, checked, 1e-5, 1e-6, what);
      };
      check(0, gq, "grad_q");
      check(1, gk, "grad_k");
      check(2, gv, "grad_v");
    }
  }
}

// Central differences of the f32 op itself on a few elements of q, k and v
// (loose tolerance: f32 forward).
TEST(VarlenAttentionTest, OpGradientMatchesFiniteDifferences) {
  TwoPools pools;
  for (int variant = 0; variant < 4; ++variant) {
    const Case c{{4, 7, 2}, 2, 4, variant % 2 == 1, variant < 2 ? 0.0f : 0.25f};
    SCOPED_TRACE(Name(c));
    const int64_t tokens = 13, width = 8;
    Qkv in = MakeQkv(tokens, width, 21);
    const Tensor go = RandomF32({tokens, width}, 22);
    const std::vector<double> w = ToDouble(go);
    const Result r = RunAttention(pools.ctx1, c, in, go);
    float* fused = in.fused.data<float>();
    const double h = 1e-2;
    for (int part = 0; part < 3; ++part) {
      const Tensor& grad = part == 0 ? r.gq : part == 1 ? r.gk : r.gv;
      for (int64_t idx = 0; idx < tokens * width; idx += 5) {
        const int64_t row = idx / width, col = idx % width;
        float* x = fused + row * 3 * width + part * width + col;
        const float x0 = *x;
        *x = static_cast<float>(x0 + h);
        const double fp = Dot(ToVec(RunAttention(pools.ctx1, c, in, Tensor()).out), w);
        *x = static_cast<float>(x0 - h);
        const double fm = Dot(ToVec(RunAttention(pools.ctx1, c, in, Tensor()).out), w);
        *x = x0;
        const double num = (fp - fm) / (2 * h);
        const double got = grad.data<float>()[row * grad.stride(0) + col];
        EXPECT_NEAR(got, num, 2e-3 + 2e-2 * std::fabs(num)) << "part " << part << " row " << row << " col " << col;
      }
    }
  }
}

// Each sequence of a packed batch gets exactly what it gets alone: nothing
// leaks across sequence boundaries.
TEST(VarlenAttentionTest, PackedEqualsOneSequenceAtATime) {
  TwoPools pools;
  for (bool causal : {false, true}) {
    const Case c{{33, 1, 90, 17}, 3, 8, causal, 0.0f};
    SCOPED_TRACE(Name(c));
    const int64_t tokens = 141, width = 24;
    const Qkv in = MakeQkv(tokens, width, 31);
    const Tensor go = RandomF32({tokens, width}, 32);
    const Result packed = RunAttention(pools.ctx3, c, in, go);
    int64_t base = 0;
    for (int64_t len : c.lengths) {
      Qkv one;
      one.fused = in.fused.Slice(0, base, base + len).Clone();
      one.q = one.fused.Slice(1, 0, width);
      one.k = one.fused.Slice(1, width, 2 * width);
      one.v = one.fused.Slice(1, 2 * width, 3 * width);
      const Case single{{len}, c.heads, c.d, causal, 0.0f};
      const Result alone = RunAttention(pools.ctx3, single, one, go.Slice(0, base, base + len).Clone());
      EXPECT_EQ(ToVec(alone.out), ToVec(packed.out.Slice(0, base, base + len).Clone()));
      EXPECT_EQ(ColumnF(alone.gq), ColumnF(packed.gq.Slice(0, base, base + len)));
      EXPECT_EQ(ColumnF(alone.gk), ColumnF(packed.gk.Slice(0, base, base + len)));
      EXPECT_EQ(ColumnF(alone.gv), ColumnF(packed.gv.Slice(0, base, base + len)));
      base += len;
    }
  }
}

TEST(VarlenAttentionTest, BitwiseIdenticalForAnyThreadCount) {
  TwoPools pools;
  const Case c{{100, 3, 150, 64, 20}, 2, 16, true, 0.2f};
  const int64_t tokens = 337, width = 32;
  const Qkv in = MakeQkv(tokens, width, 41);
  const Tensor go = RandomF32({tokens, width}, 42);
  const Result one = RunAttention(pools.ctx1, c, in, go), three = RunAttention(pools.ctx3, c, in, go);
  EXPECT_TRUE(BitwiseEqual(one.out, three.out));
  EXPECT_TRUE(BitwiseEqual(one.lse, three.lse));
  EXPECT_EQ(ColumnF(one.gq), ColumnF(three.gq));
  EXPECT_EQ(ColumnF(one.gk), ColumnF(three.gk));
  EXPECT_EQ(ColumnF(one.gv), ColumnF(three.gv));
}

// The dropout mask is a function of the key and (sequence, head, i, j):
// about p of the weights go, another key draws another mask.
TEST(VarlenAttentionTest, DropoutMaskIsKeyedAndHasRateP) {
  const RngKey key = AttentionDropoutKey(RngKey::FromSeed(3), 1, 2);
  int64_t dropped = 0, differ = 0, n = 0;
  const RngKey other = AttentionDropoutKey(RngKey::FromSeed(3), 2, 1);
  for (int64_t i = 0; i < 200; ++i) {
    for (int64_t j = 0; j < 200; ++j, ++n) {
      const bool keep = AttentionDropoutKeep(key, i, j, 0.3f);
      dropped += keep ? 0 : 1;
      differ += keep != AttentionDropoutKeep(other, i, j, 0.3f) ? 1 : 0;
    }
  }
  EXPECT_NEAR(static_cast<double>(dropped) / n, 0.3, 0.01);
  EXPECT_GT(differ, n / 4);
}

TEST(VarlenAttentionTest, RejectsBadArguments) {
  const ExecContext ctx = CpuContext();
  const Qkv in = MakeQkv(10, 8, 1);
  Tensor out = Tensor::Empty({10, 8}, DType::kF32), lse = Tensor::Empty({2, 10}, DType::kF32);
  AttentionOptions o;
  o.heads = 2;
  auto run = [&](const std::vector<int64_t>& cu, int64_t max_len) {
    return VarlenAttention(ctx, o, in.q, in.k, in.v, IdsTensor(cu, DType::kI64), max_len, &out, &lse);
  };
  EXPECT_TRUE(run({0, 4, 10}, 6).ok());
  Status s = run({0, 6, 4, 10}, 10);
  EXPECT_NE(s.ToString().find("decrease at sequence 1"), std::string::npos) << s.ToString();
  s = run({0, 4, 9}, 10);
  EXPECT_NE(s.ToString().find("number of tokens 10"), std::string::npos) << s.ToString();
  s = run({0, 4, 10}, 5);
  EXPECT_NE(s.ToString().find("more than max_seqlen 5"), std::string::npos) << s.ToString();
  s = run({1, 4, 10}, 10);
  EXPECT_NE(s.ToString().find("offset 0 must be 0"), std::string::npos) << s.ToString();
  o.heads = 3;
  s = run({0, 10}, 10);
  EXPECT_NE(s.ToString().find("multiple of 3 heads"), std::string::npos) << s.ToString();
  o.heads = 2;
  o.dropout = 1.0f;
  s = run({0, 10}, 10);
  EXPECT_NE(s.ToString().find("dropout must be in [0, 1)"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace foresight::kernels::test
