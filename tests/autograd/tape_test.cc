// The tape: recording rules, no-grad mode, gradient accumulation across
// steps, gradient-ready hooks, RNG keys, dropout masks, lifetimes.
#include "foresight/autograd/tape.h"

#include <cstring>
#include <map>

#include "foresight/autograd/layers.h"
#include "grad_check.h"

namespace foresight::autograd {
namespace {

using testing::RandomTensor;

// A custom model as a user would write one: layers composed, one of them
// applied twice (shared weights), a parameter the step never uses and a
// branch whose result does not reach the loss.
class TinyModel : public Module {
 public:
  explicit TinyModel(RngKey key) : Module("tiny") {
    scale_ = AddParameter("scale", RandomTensor({2}, 5));
    unused_ = AddParameter("unused", RandomTensor({2}, 6));
    a_ = AddChild(std::make_unique<Linear>("tiny.a", 3, 3, true, key.Fold(0)));
    b_ = AddChild(std::make_unique<Linear>("tiny.b", 3, 2, true, key.Fold(1)));
    dead_ = AddChild(std::make_unique<Linear>("tiny.dead", 3, 2, false, key.Fold(2)));
  }
  StatusOr<Var> Forward(Tape& tape, const Var& x) {
    FS_ASSIGN_OR_RETURN(Var h, a_->Forward(tape, x));
    FS_ASSIGN_OR_RETURN(h, Elu(tape, h));
    FS_ASSIGN_OR_RETURN(h, a_->Forward(tape, h));
    FS_ASSIGN_OR_RETURN(Var ignored, dead_->Forward(tape, h));
    (void)ignored;
    FS_ASSIGN_OR_RETURN(h, b_->Forward(tape, h));
    return AddBias(tape, h, scale_->var());
  }
  StatusOr<Var> Loss(Tape& tape, const Var& x, const Tensor& labels) {
    FS_ASSIGN_OR_RETURN(Var y, Forward(tape, x));
    FS_ASSIGN_OR_RETURN(y, LogSoftmax(tape, y));
    return NllLoss(tape, y, labels);
  }

 private:
  Parameter* scale_;
  Parameter* unused_;
  Linear* a_;
  Linear* b_;
  Linear* dead_;
};

Tensor Labels() {
  Tensor labels = Tensor::Empty({4}, DType::kI64);
  for (int i = 0; i < 4; ++i) labels.data<int64_t>()[i] = i % 2;
  return labels;
}

TEST(TapeTest, ParametersInRegistrationOrder) {
  TinyModel model(RngKey::FromSeed(1));
  std::vector<std::string> names;
  for (Parameter* p : model.Parameters()) names.push_back(p->name());
  EXPECT_EQ(names, (std::vector<std::string>{"tiny.scale", "tiny.unused", "tiny.a.weight", "tiny.a.bias",
                                             "tiny.b.weight", "tiny.b.bias", "tiny.dead.weight"}));
}

TEST(TapeTest, HooksFireOncePerParameterAfterItsGradientIsFinal) {
  TinyModel model(RngKey::FromSeed(1));
  Var x(RandomTensor({4, 3}, 2));
  struct Seen {
    int calls = 0;
    Tensor grad_at_hook;
    int order = -1;
  };
  std::map<std::string, Seen> seen;
  int order = 0;
  for (Parameter* p : model.Parameters()) {
    p->SetGradReadyHook([&seen, &order](Parameter& q) {
      Seen& s = seen[q.name()];
      ++s.calls;
      s.order = order++;
      s.grad_at_hook = q.grad().defined() ? q.grad().Clone() : Tensor();
    });
  }
  for (int step = 1; step <= 2; ++step) {
    Tape tape(CpuContext(), true);
    ASSERT_OK_AND_ASSIGN(Var loss, model.Loss(tape, x, Labels()));
    ASSERT_OK(tape.Backward(loss));
    for (Parameter* p : model.Parameters()) {
      const Seen& s = seen[p->name()];
      if (p->name() == "tiny.unused") {
        EXPECT_EQ(s.calls, 0) << "a parameter the step does not use gets no hook";
        continue;
      }
      EXPECT_EQ(s.calls, step) << p->name();
      if (p->name() == "tiny.dead.weight") {
        EXPECT_FALSE(s.grad_at_hook.defined()) << "no gradient reaches the dead branch";
        EXPECT_FALSE(p->grad().defined());
        continue;
      }
      ASSERT_TRUE(p->grad().defined()) << p->name();
      testing::ExpectBitwiseEqual(s.grad_at_hook, p->grad(), p->name() + " at its hook vs after Backward");
    }
    // b's gradient is final before a's (a is used earlier, and twice).
    EXPECT_LT(seen["tiny.b.weight"].order, seen["tiny.a.weight"].order);
    EXPECT_LT(seen["tiny.scale"].order, seen["tiny.b.weight"].order);
  }
}

TEST(TapeTest, ParameterGradientsAccumulateUntilZeroGrad) {
  TinyModel model(RngKey::FromSeed(3));
  Var x(RandomTensor({4, 3}, 4));
  std::vector<Tensor> first;
  for (int step = 0; step < 2; ++step) {
    Tape tape(CpuContext(), false);
    ASSERT_OK_AND_ASSIGN(Var loss, model.Loss(tape, x, Labels()));
    ASSERT_OK(tape.Backward(loss));
    if (step == 0) {
      for (Parameter* p : model.Parameters()) first.push_back(p->grad().defined() ? p->grad().Clone() : Tensor());
    }
  }
  auto params = model.Parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    if (!first[i].defined()) continue;
    // Equal up to rounding: the second step accumulates through Gemm's beta.
    std::vector<double> twice = testing::ToDoubles(first[i]);
    for (double& v : twice) v *= 2.0;
    testing::ExpectNear(params[i]->grad(), twice, 1e-5, params[i]->name() + " after two steps");
  }
  model.ZeroGrad();
  for (Parameter* p : model.Parameters()) EXPECT_FALSE(p->grad().defined()) << p->name();
}

TEST(TapeTest, NoGradTapeRecordsNothing) {
  TinyModel model(RngKey::FromSeed(5));
  Var x(RandomTensor({4, 3}, 6), true);
  Tape tape(CpuContext(), false, /*record=*/false);
  EXPECT_FALSE(tape.recording());
  ASSERT_OK_AND_ASSIGN(Var loss, model.Loss(tape, x, Labels()));
  EXPECT_FALSE(loss.requires_grad());
  EXPECT_ERROR_CONTAINS(tape.Backward(loss), "no-grad");
  for (Parameter* p : model.Parameters()) EXPECT_FALSE(p->grad().defined()) << p->name();
  EXPECT_FALSE(x.grad().defined());
}

TEST(TapeTest, RecordSkipsOpsWithoutGradInputs) {
  Tape tape(CpuContext(), false);
  bool ran = false;
  Var a(RandomTensor({2}, 1)), b(RandomTensor({2}, 2), true);
  Var y = tape.Record({a}, RandomTensor({2}, 3), [&](const ExecContext&) {
    ran = true;
    return Status::OK();
  });
  EXPECT_FALSE(y.requires_grad());
  Var z = tape.RecordGrad({a, b}, RandomTensor({1}, 4), [&](const ExecContext& ctx, const Tensor& g) {
    EXPECT_EQ(g.data<float>()[0], 1.0f);
    return b.AccumulateGrad(ctx, RandomTensor({2}, 5));
  });
  EXPECT_TRUE(z.requires_grad());
  ASSERT_OK(tape.Backward(z));
  EXPECT_FALSE(ran);
  EXPECT_FALSE(a.grad().defined());
  testing::ExpectBitwiseEqual(b.grad(), RandomTensor({2}, 5), "b.grad");
  EXPECT_ERROR_CONTAINS(tape.Backward(z), "nothing recorded");
}

TEST(TapeTest, BackwardChecksTheLossAndReportsFailingOps) {
  Tape tape(CpuContext(), false);
  Var b(RandomTensor({2}, 2), true);
  Var two = tape.RecordGrad({b}, RandomTensor({2}, 3), [](const ExecContext&, const Tensor&) { return Status(); });
  EXPECT_ERROR_CONTAINS(tape.Backward(two), "one element", "[2]");
  Var bad = tape.RecordGrad({b}, RandomTensor({1}, 3),
                            [](const ExecContext&, const Tensor&) { return Internal("kernel exploded"); });
  EXPECT_ERROR_CONTAINS(tape.Backward(bad), "Tape::Backward: recorded op #1", "kernel exploded");
}

TEST(TapeTest, NextRngKeyFoldsTheCallIndex) {
  const ExecContext ctx = CpuContext(9);
  Tape tape(ctx, true);
  for (uint64_t n = 0; n < 3; ++n) EXPECT_EQ(tape.NextRngKey().key, ctx.rng.Fold(n).key);
}

TEST(TapeTest, DropoutMaskDependsOnlyOnTheKey) {
  Var x(RandomTensor({50, 8}, 7, 0.5f, 1.5f), true);
  auto run = [&](uint64_t seed, int which) -> Tensor {
    Tape tape(CpuContext(seed), true);
    Var y;
    for (int i = 0; i <= which; ++i) y = Dropout(tape, x, 0.5f).value();
    return y.value();
  };
  Tensor a = run(1, 0), a2 = run(1, 0), b = run(2, 0), second = run(1, 1);
  testing::ExpectBitwiseEqual(a, a2, "same key");
  EXPECT_NE(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0) << "different seed, same mask";
  EXPECT_NE(std::memcmp(a.raw_data(), second.raw_data(), a.nbytes()), 0) << "second dropout of a step reused the key";
  int kept = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const float y = a.data<float>()[i], xi = x.value().data<float>()[i];
    if (y != 0.0f) {
      ++kept;
      EXPECT_FLOAT_EQ(y, 2.0f * xi);
    }
  }
  EXPECT_GT(kept, 120);
  EXPECT_LT(kept, 280);

  // The gradient uses the same mask: d y / d x is 0 or 1 / (1 - p).
  Tape tape(CpuContext(1), true);
  ASSERT_OK_AND_ASSIGN(Var y, Dropout(tape, x, 0.5f));
  Tensor r = RandomTensor(y.shape(), 8);
  ASSERT_OK(tape.Backward(testing::ProjectionLoss(tape, y, r)));
  for (int64_t i = 0; i < a.numel(); ++i) {
    const float expected = a.data<float>()[i] != 0.0f ? 2.0f * r.data<float>()[i] : 0.0f;
    EXPECT_FLOAT_EQ(x.grad().data<float>()[i], expected);
  }
}

TEST(TapeTest, VarsDoNotKeepTheTapeAlive) {
  auto sentinel = std::make_shared<int>(0);
  Var out;
  Var b(RandomTensor({1}, 2), true);
  {
    Tape tape(CpuContext(), false);
    out = tape.RecordGrad({b}, RandomTensor({1}, 3),
                          [sentinel](const ExecContext&, const Tensor&) { return Status::OK(); });
    EXPECT_EQ(sentinel.use_count(), 2);
  }
  EXPECT_EQ(sentinel.use_count(), 1) << "the closure outlived its tape";
  EXPECT_TRUE(out.requires_grad());
  // Backward releases each node after running it.
  Tape tape(CpuContext(), false);
  Var y = tape.RecordGrad({b}, RandomTensor({1}, 3),
                          [sentinel](const ExecContext&, const Tensor&) { return Status::OK(); });
  EXPECT_EQ(sentinel.use_count(), 2);
  ASSERT_OK(tape.Backward(y));
  EXPECT_EQ(sentinel.use_count(), 1);
}

}  // namespace
}  // namespace foresight::autograd
