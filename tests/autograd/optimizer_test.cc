// Optimizers against values computed by hand (in double) for two steps.
#include "foresight/autograd/optimizer.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "grad_check.h"

namespace foresight::autograd {
namespace {

Tensor Vec(std::vector<float> v) {
  Tensor t = Tensor::Empty({static_cast<int64_t>(v.size())}, DType::kF32);
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = v[i];
  return t;
}

// w0 = [1, -2]; step 1 grad [0.5, 0.25], step 2 grad [-0.3, 0.1].
struct TwoSteps {
  std::vector<double> after1, after2;
};

void RunTwoSteps(const OptimizerOptions& options, const TwoSteps& expected) {
  Parameter p("p", Vec({1.0f, -2.0f}));
  Parameter idle("idle", Vec({3.0f}));  // never gets a gradient: never moves
  ASSERT_OK_AND_ASSIGN(auto opt, Optimizer::Create(options, {&p, &idle}));
  const ExecContext ctx = CpuContext();
  p.mutable_grad() = Vec({0.5f, 0.25f});
  ASSERT_OK(opt->Step(ctx));
  testing::ExpectNear(p.value(), expected.after1, 2e-6, options.kind + " step 1");
  opt->ZeroGrad();
  EXPECT_FALSE(p.grad().defined());
  p.mutable_grad() = Vec({-0.3f, 0.1f});
  ASSERT_OK(opt->Step(ctx));
  testing::ExpectNear(p.value(), expected.after2, 2e-6, options.kind + " step 2");
  EXPECT_EQ(opt->step_count(), 2);
  EXPECT_EQ(idle.value().data<float>()[0], 3.0f);
}

TEST(OptimizerTest, SgdWithMomentumAndL2) {
  OptimizerOptions o;
  o.kind = "sgd";
  o.lr = 0.1f;
  o.weight_decay = 0.01f;
  o.momentum = 0.9f;
  // g' = g + 0.01 w; buf = 0.9 buf + g'; w -= 0.1 buf.
  RunTwoSteps(o, {{0.949, -2.023}, {0.932151, -2.051677}});
}

TEST(OptimizerTest, PlainSgd) {
  OptimizerOptions o;
  o.kind = "sgd";
  o.lr = 0.5f;
  RunTwoSteps(o, {{0.75, -2.125}, {0.9, -2.175}});
}

TEST(OptimizerTest, AdamWithCoupledL2) {
  OptimizerOptions o;
  o.kind = "adam";
  o.lr = 0.1f;
  o.weight_decay = 0.01f;
  RunTwoSteps(o, {{0.900000002, -2.099999996}, {0.878701244, -2.187552544}});
}

TEST(OptimizerTest, AdamWDecoupled) {
  OptimizerOptions o;
  o.kind = "adamw";
  o.lr = 0.1f;
  o.weight_decay = 0.1f;
  RunTwoSteps(o, {{0.890000002, -2.079999996}, {0.861950199, -2.149057512}});
}

TEST(OptimizerTest, StateTensorsAreNamedPerParameter) {
  Parameter a("layer.weight", Vec({1.0f, 2.0f})), b("layer.bias", Vec({0.0f}));
  OptimizerOptions o;
  ASSERT_OK_AND_ASSIGN(auto adam, Optimizer::Create(o, {&a, &b}));
  a.mutable_grad() = Vec({0.5f, 0.25f});
  ASSERT_OK(adam->Step(CpuContext()));
  auto state = adam->StateTensors();
  ASSERT_EQ(state.size(), 4u);
  EXPECT_EQ(state[0].first, "layer.weight.m");
  EXPECT_EQ(state[1].first, "layer.weight.v");
  EXPECT_EQ(state[2].first, "layer.bias.m");
  EXPECT_EQ(state[3].first, "layer.bias.v");
  testing::ExpectNear(*state[0].second, {0.05, 0.025}, 1e-7, "m");
  testing::ExpectNear(*state[1].second, {0.00025, 0.0000625}, 1e-8, "v");
  testing::ExpectNear(*state[2].second, {0.0}, 0.0, "untouched m");

  o.kind = "sgd";
  ASSERT_OK_AND_ASSIGN(auto sgd, Optimizer::Create(o, {&a}));
  EXPECT_TRUE(sgd->StateTensors().empty());
  o.momentum = 0.5f;
  ASSERT_OK_AND_ASSIGN(auto momentum, Optimizer::Create(o, {&a}));
  ASSERT_EQ(momentum->StateTensors().size(), 1u);
  EXPECT_EQ(momentum->StateTensors()[0].first, "layer.weight.momentum");
}

TEST(OptimizerTest, RejectsBadOptions) {
  Parameter a("w", Vec({1.0f}));
  OptimizerOptions o;
  o.kind = "lamb";
  EXPECT_ERROR_CONTAINS(Optimizer::Create(o, {&a}), "unknown optimizer kind 'lamb'", "sgd, adam or adamw");
  o.kind = "adam";
  o.beta1 = 1.0f;
  EXPECT_ERROR_CONTAINS(Optimizer::Create(o, {&a}), "beta1", "[0, 1)");
  o.beta1 = 0.9f;
  o.lr = -1.0f;
  EXPECT_ERROR_CONTAINS(Optimizer::Create(o, {&a}), "lr");
  o.lr = 0.1f;
  EXPECT_ERROR_CONTAINS(Optimizer::Create(o, {&a, &a}), "'w' is listed twice");
  ASSERT_OK_AND_ASSIGN(auto opt, Optimizer::Create(o, {&a}));
  a.mutable_grad() = Vec({1.0f, 2.0f});
  EXPECT_ERROR_CONTAINS(opt->Step(CpuContext()), "'w'", "contiguous f32 of one shape");
}

// Long parameters (several update chunks, vector loop plus tail) give the
// bits of the scalar update written out in float, for Adam and AdamW.
TEST(OptimizerTest, AdamLongParametersMatchTheScalarUpdateBitwise) {
  for (const char* kind : {"adam", "adamw"}) {
    OptimizerOptions o;
    o.kind = kind;
    o.lr = 0.01f;
    o.weight_decay = 0.05f;
    const int64_t sizes[2] = {70001, 13};
    std::vector<std::unique_ptr<Parameter>> params;
    std::vector<Parameter*> raw;
    std::vector<std::vector<float>> w, m, v;
    for (int k = 0; k < 2; ++k) {
      std::vector<float> init(static_cast<size_t>(sizes[k]));
      for (int64_t i = 0; i < sizes[k]; ++i) init[i] = std::sin(0.37f * static_cast<float>(i + k));
      params.push_back(std::make_unique<Parameter>("p" + std::to_string(k), Vec(init)));
      raw.push_back(params.back().get());
      w.push_back(init);
      m.emplace_back(init.size(), 0.0f);
      v.emplace_back(init.size(), 0.0f);
    }
    ASSERT_OK_AND_ASSIGN(auto opt, Optimizer::Create(o, raw));
    const bool decoupled = std::string(kind) == "adamw";
    for (int step = 1; step <= 3; ++step) {
      const float b1 = o.beta1, b2 = o.beta2;
      const float step_size = static_cast<float>(o.lr / (1.0 - std::pow(static_cast<double>(b1), step)));
      const float bc2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(static_cast<double>(b2), step)));
      const float wd = decoupled ? 0.0f : o.weight_decay;
      const float shrink = decoupled ? std::fma(-o.lr, o.weight_decay, 1.0f) : 1.0f;
      for (int k = 0; k < 2; ++k) {
        std::vector<float> g(w[k].size());
        for (size_t i = 0; i < g.size(); ++i) g[i] = std::cos(0.11f * static_cast<float>(i) + static_cast<float>(step));
        raw[k]->mutable_grad() = Vec(g);
        for (size_t i = 0; i < g.size(); ++i) {
          // The documented update: its multiply-adds fused (std::fma).
          const float gj = std::fma(wd, w[k][i], g[i]);
          volatile float g1 = (1.0f - b1) * gj;  // volatile: no further contraction
          volatile float g2 = (1.0f - b2) * gj;
          volatile float g2g = g2 * gj;
          m[k][i] = std::fma(b1, m[k][i], g1);
          v[k][i] = std::fma(b2, v[k][i], g2g);
          volatile float q = std::sqrt(v[k][i]) / bc2_sqrt;
          volatile float den = q + o.eps;
          volatile float num = step_size * m[k][i];
          w[k][i] = std::fma(w[k][i], shrink, -(num / den));
        }
      }
      ASSERT_OK(opt->Step(CpuContext()));
      for (int k = 0; k < 2; ++k) {
        for (size_t i = 0; i < w[k].size(); ++i) {
          ASSERT_EQ(raw[k]->value().data<float>()[i], w[k][i]) << kind << " step " << step << " param " << k << " [" << i << "]";
        }
      }
    }
  }
}

}  // namespace
}  // namespace foresight::autograd
