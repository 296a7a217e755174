// Optimizers against values computed by hand (in double) for two steps.
#include "foresight/autograd/optimizer.h"

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

}  // namespace
}  // namespace foresight::autograd
