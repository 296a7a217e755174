// TransformerEncoderLayer and MultiHeadAttention on packed sequences: the
// packed output equals a padded reference (every sequence padded to the
// longest with garbage tokens, padded keys masked, in double) on the real
// tokens, for post- and pre-norm, causal and bidirectional; gradients of
// input and every parameter against finite differences; errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "foresight/autograd/transformer.h"
#include "grad_check.h"
#include "reference/transformer_reference.h"

namespace foresight::autograd {
namespace {

using testing::CheckGradients;
using testing::Checked;
using testing::RandomTensor;

using Vec = std::vector<double>;

Vec D(const Tensor& t) { return testing::ToDoubles(t); }

std::map<std::string, Vec> Params(const Module& m, const std::string& prefix) {
  std::map<std::string, Vec> out;
  for (Parameter* p : m.Parameters()) out[p->name().substr(prefix.size() + 1)] = D(p->value());
  return out;
}

// y[n, out] = x[n, in] w[in, out] + b
Vec Affine(const Vec& x, const Vec& w, const Vec& b, int64_t n, int64_t in, int64_t out) {
  Vec y(n * out);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < out; ++c) {
      double s = b.empty() ? 0.0 : b[c];
      for (int64_t k = 0; k < in; ++k) s += x[r * in + k] * w[k * out + c];
      y[r * out + c] = s;
    }
  }
  return y;
}

Vec Norm(const Vec& x, const Vec& gamma, const Vec& beta, int64_t e) {
  return reference::LayerNormForward(x, {}, {}, gamma, beta, 1e-5, e);
}

Vec Plus(Vec a, const Vec& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

// Self-attention of one padded sequence of `padded` rows whose first `len`
// are real: keys at positions >= len are masked out, as a padded batch with
// a key padding mask does.
Vec PaddedMha(const std::map<std::string, Vec>& p, const std::string& pre, const Vec& x, int64_t padded,
              int64_t len, int64_t e, int64_t heads, bool causal) {
  const int64_t d = e / heads;
  const Vec qkv = Affine(x, p.at(pre + "qkv_weight"), p.at(pre + "qkv_bias"), padded, e, 3 * e);
  Vec a(padded * e, 0.0);
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < padded; ++i) {
      Vec s(padded, -INFINITY);
      double mx = -INFINITY;
      for (int64_t j = 0; j < padded; ++j) {
        if (j >= len || (causal && j > i)) continue;
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) dot += qkv[i * 3 * e + h * d + c] * qkv[j * 3 * e + e + h * d + c];
        s[j] = dot / std::sqrt(static_cast<double>(d));
        mx = std::max(mx, s[j]);
      }
      double z = 0;
      for (int64_t j = 0; j < padded; ++j) z += std::isinf(s[j]) ? 0.0 : std::exp(s[j] - mx);
      for (int64_t j = 0; j < padded; ++j) {
        if (std::isinf(s[j])) continue;
        const double w = std::exp(s[j] - mx) / z;
        for (int64_t c = 0; c < d; ++c) a[i * e + h * d + c] += w * qkv[j * 3 * e + 2 * e + h * d + c];
      }
    }
  }
  return Affine(a, p.at(pre + "out_weight"), p.at(pre + "out_bias"), padded, e, e);
}

Vec PaddedLayer(const std::map<std::string, Vec>& p, const TransformerEncoderConfig& c, const Vec& x, int64_t padded,
                int64_t len) {
  const int64_t e = c.hidden, f = c.ffn;
  auto ffn = [&](const Vec& u) {
    Vec h = Affine(u, p.at("ffn1_weight"), p.at("ffn1_bias"), padded, e, f);
    for (double& v : h) v = reference::Gelu(c.gelu, v);
    return Affine(h, p.at("ffn2_weight"), p.at("ffn2_bias"), padded, f, e);
  };
  auto mha = [&](const Vec& u) { return PaddedMha(p, "attention.", u, padded, len, e, c.heads, c.causal); };
  if (c.norm_first) {
    const Vec z = Plus(x, mha(Norm(x, p.at("norm1.gamma"), p.at("norm1.beta"), e)));
    return Plus(z, ffn(Norm(z, p.at("norm2.gamma"), p.at("norm2.beta"), e)));
  }
  const Vec z = Norm(Plus(x, mha(x)), p.at("norm1.gamma"), p.at("norm1.beta"), e);
  return Norm(Plus(z, ffn(z)), p.at("norm2.gamma"), p.at("norm2.beta"), e);
}

// Randomises every parameter (biases, gammas and betas too, so a missing
// term shows).
void Randomise(const Module& m, uint64_t seed) {
  for (Parameter* p : m.Parameters()) {
    const Tensor r = RandomTensor(p->value().shape(), seed++, -0.6f, 0.6f);
    ASSERT_OK(p->mutable_value().CopyFrom(r));
    if (p->name().find("gamma") != std::string::npos) {
      for (int64_t i = 0; i < r.numel(); ++i) p->mutable_value().data<float>()[i] += 1.0f;
    }
  }
}

struct Variant {
  bool norm_first, causal;
  kernels::GeluForm gelu;
};

std::vector<Variant> Variants() {
  return {{false, false, kernels::GeluForm::kErf},
          {false, true, kernels::GeluForm::kTanh},
          {true, false, kernels::GeluForm::kTanh},
          {true, true, kernels::GeluForm::kErf}};
}

std::string Name(const Variant& v) {
  return std::string(v.norm_first ? "pre-norm" : "post-norm") + (v.causal ? " causal " : " bidirectional ") +
         kernels::GeluFormName(v.gelu);
}

TEST(TransformerEncoderLayerTest, PackedEqualsPaddedReference) {
  const std::vector<int64_t> lengths{5, 1, 70, 0, 13};  // 70: more than one 64-row tile
  const int64_t e = 16, padded = 70;
  for (const Variant& v : Variants()) {
    SCOPED_TRACE(Name(v));
    TransformerEncoderConfig c;
    c.hidden = e;
    c.heads = 4;
    c.ffn = 24;
    c.norm_first = v.norm_first;
    c.causal = v.causal;
    c.gelu = v.gelu;
    TransformerEncoderLayer layer("enc", c, RngKey::FromSeed(3));
    Randomise(layer, 100);
    ASSERT_OK_AND_ASSIGN(PackedSequences packed, PackedSequences::FromLengths(lengths));
    const Tensor x = RandomTensor({packed.total_tokens(), e}, 7, -2.0f, 2.0f);
    Tape tape(CpuContext(1), /*training=*/false, /*record=*/false);
    ASSERT_OK_AND_ASSIGN(Var y, layer.Forward(tape, Var(x), packed));
    ASSERT_EQ(y.shape(), (Shape{packed.total_tokens(), e}));
    const Vec got = D(y.value()), xs = D(x);
    const auto params = Params(layer, "enc");
    for (int64_t b = 0; b < packed.batch(); ++b) {
      // The sequence padded to the longest with garbage rows.
      Vec xp = D(RandomTensor({padded, e}, 50 + b, -5.0f, 5.0f));
      const int64_t base = packed.offsets()[b], len = packed.length(b);
      std::copy(xs.begin() + base * e, xs.begin() + (base + len) * e, xp.begin());
      const Vec want = PaddedLayer(params, c, xp, padded, len);
      for (int64_t i = 0; i < len * e; ++i) {
        ASSERT_NEAR(got[base * e + i], want[i], 2e-4 + 2e-4 * std::fabs(want[i])) << "sequence " << b << " element " << i;
      }
    }
  }
}

TEST(TransformerEncoderLayerTest, GradientsMatchFiniteDifferences) {
  for (const Variant& v : Variants()) {
    SCOPED_TRACE(Name(v));
    TransformerEncoderConfig c;
    c.hidden = 8;
    c.heads = 2;
    c.ffn = 12;
    c.norm_first = v.norm_first;
    c.causal = v.causal;
    c.gelu = v.gelu;
    TransformerEncoderLayer layer("enc", c, RngKey::FromSeed(4));
    Randomise(layer, 200);
    ASSERT_OK_AND_ASSIGN(PackedSequences packed, PackedSequences::FromLengths({3, 1, 5}));
    Var x(RandomTensor({9, 8}, 9), true);
    std::vector<Checked> checked{{"x", x}};
    for (Parameter* p : layer.Parameters()) checked.push_back({p->name(), p->var()});
    CheckGradients([&](Tape& t) { return layer.Forward(t, x, packed); }, checked, 5);
  }
}

// With dropout in training the masks depend only on the step key, so the
// check's repeated forwards see the same masks.
TEST(TransformerEncoderLayerTest, GradientsWithDropoutMatchFiniteDifferences) {
  for (bool norm_first : {false, true}) {
    SCOPED_TRACE(norm_first ? "pre-norm" : "post-norm");
    TransformerEncoderConfig c;
    c.hidden = 8;
    c.heads = 2;
    c.ffn = 12;
    c.norm_first = norm_first;
    c.causal = true;
    c.dropout = 0.2f;
    c.attn_dropout = 0.3f;
    TransformerEncoderLayer layer("enc", c, RngKey::FromSeed(4));
    Randomise(layer, 300);
    ASSERT_OK_AND_ASSIGN(PackedSequences packed, PackedSequences::FromLengths({4, 6}));
    Var x(RandomTensor({10, 8}, 10), true);
    std::vector<Checked> checked{{"x", x}};
    for (Parameter* p : layer.Parameters()) checked.push_back({p->name(), p->var()});
    testing::GradCheckOptions o;
    o.training = true;
    CheckGradients([&](Tape& t) { return layer.Forward(t, x, packed); }, checked, 6, o);
  }
}

TEST(MultiHeadAttentionTest, GradientsMatchFiniteDifferences) {
  for (bool causal : {false, true}) {
    AttentionConfig c;
    c.hidden = 6;
    c.heads = 3;
    c.causal = causal;
    MultiHeadAttention mha("mha", c, RngKey::FromSeed(8));
    Randomise(mha, 400);
    ASSERT_OK_AND_ASSIGN(PackedSequences packed, PackedSequences::FromLengths({2, 0, 4}));
    Var x(RandomTensor({6, 6}, 11), true);
    std::vector<Checked> checked{{"x", x}};
    for (Parameter* p : mha.Parameters()) checked.push_back({p->name(), p->var()});
    CheckGradients([&](Tape& t) { return mha.Forward(t, x, packed); }, checked, 7);
  }
}

TEST(TransformerOpsTest, GeluAndGeluMatMulGradientsMatchFiniteDifferences) {
  for (kernels::GeluForm form : {kernels::GeluForm::kErf, kernels::GeluForm::kTanh}) {
    SCOPED_TRACE(kernels::GeluFormName(form));
    // Fresh Vars for each check: a plain Var's gradient accumulates across checks.
    Var x(RandomTensor({5, 7}, 1, -3.0f, 3.0f), true), b(RandomTensor({7}, 2), true);
    CheckGradients([&](Tape& t) { return Gelu(t, x, b, form); }, {{"x", x}, {"bias", b}}, 8);
    Var x2(x.value().Clone(), true), b2(b.value().Clone(), true), w(RandomTensor({7, 4}, 3), true);
    CheckGradients([&](Tape& t) { return GeluMatMul(t, x2, b2, w, form); }, {{"x", x2}, {"bias", b2}, {"w", w}}, 9);
  }
}

TEST(TransformerOpsTest, AddLayerNormSumAndOutGradients) {
  Var x(RandomTensor({4, 6}, 1, -2.0f, 2.0f), true), b(RandomTensor({6}, 2), true), r(RandomTensor({4, 6}, 3), true);
  Var gamma(RandomTensor({6}, 4, 0.5f, 1.5f), true), beta(RandomTensor({6}, 5), true);
  const std::vector<Checked> all{{"x", x}, {"bias", b}, {"residual", r}, {"gamma", gamma}, {"beta", beta}};
  // Both outputs used (a pre-norm residual stream): out + sum.
  CheckGradients(
      [&](Tape& t) -> StatusOr<Var> {
        FS_ASSIGN_OR_RETURN(LayerNormOutputs o, AddLayerNorm(t, x, b, r, gamma, beta, 1e-5f));
        return Add(t, o.out, o.sum);
      },
      all, 10);
  // h written over a matmul's output: the same values and gradients.
  Var x2(x.value().Clone(), true), b2(b.value().Clone(), true), r2(r.value().Clone(), true);
  Var w(RandomTensor({6, 6}, 6), true);
  CheckGradients(
      [&](Tape& t) -> StatusOr<Var> {
        FS_ASSIGN_OR_RETURN(Var p, MatMul(t, x2, w));
        FS_ASSIGN_OR_RETURN(LayerNormOutputs o, AddLayerNorm(t, p, b2, r2, gamma, beta, 1e-5f, /*overwrite_x=*/true));
        return o.out;
      },
      {{"x", x2}, {"w", w}, {"bias", b2}, {"residual", r2}}, 11);
}

TEST(TransformerEncoderLayerTest, RejectsMismatchedInput) {
  TransformerEncoderConfig c;
  c.hidden = 8;
  c.heads = 3;
  c.ffn = 4;
  TransformerEncoderLayer bad_heads("enc", c, RngKey::FromSeed(1));
  ASSERT_OK_AND_ASSIGN(PackedSequences packed, PackedSequences::FromLengths({2, 3}));
  Tape tape(CpuContext(), false, false);
  EXPECT_ERROR_CONTAINS(bad_heads.Forward(tape, Var(RandomTensor({5, 8}, 1)), packed), "multiple of heads");
  c.heads = 2;
  TransformerEncoderLayer layer("enc", c, RngKey::FromSeed(1));
  EXPECT_ERROR_CONTAINS(layer.Forward(tape, Var(RandomTensor({6, 8}, 1)), packed), "6 rows", "5 tokens");
  EXPECT_ERROR_CONTAINS(layer.Forward(tape, Var(RandomTensor({5, 7}, 1)), packed), "8 columns");
  EXPECT_ERROR_CONTAINS(PackedSequences::FromLengths({2, -1}), "sequence 1 has negative length");
}

}  // namespace
}  // namespace foresight::autograd
