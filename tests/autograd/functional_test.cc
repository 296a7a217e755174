// Finite-difference gradient checks and forward references for every
// differentiable op in functional.h.
#include "foresight/autograd/functional.h"
#include "foresight/autograd/keyed_dropout.h"

#include <cmath>
#include <cstring>

#include "grad_check.h"

namespace foresight::autograd {
namespace {

using testing::Checked;
using testing::CheckGradients;
using testing::RandomTensor;

Var Input(const Shape& shape, uint64_t seed) { return Var(RandomTensor(shape, seed), true); }

// Values with |x| >= 0.1 so a finite difference never straddles a kink at 0.
Var InputAwayFromZero(const Shape& shape, uint64_t seed) {
  Tensor t = RandomTensor(shape, seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    float& v = t.data<float>()[i];
    v = v < 0 ? v - 0.1f : v + 0.1f;
  }
  return Var(t, true);
}

TEST(FunctionalTest, MatMulForwardAndGradients) {
  Var x = Input({5, 4}, 1), w = Input({4, 3}, 2);
  {
    Tape tape(CpuContext(), false);
    ASSERT_OK_AND_ASSIGN(Var y, MatMul(tape, x, w));
    testing::ExpectNear(y.value(), testing::Flatten(testing::MatMulRef(testing::ToMatrix(x.value()),
                                                                       testing::ToMatrix(w.value()))),
                        1e-5, "MatMul");
  }
  CheckGradients([&](Tape& t) { return MatMul(t, x, w); }, {{"x", x}, {"w", w}}, 3);
}

TEST(FunctionalTest, MatMulRejectsMismatchedShapes) {
  Tape tape(CpuContext(), false);
  EXPECT_ERROR_CONTAINS(MatMul(tape, Input({5, 4}, 1), Input({3, 3}, 2)), "MatMul", "[5, 4]", "[3, 3]");
}

// Both gradients of DLRM's interaction; with x as both inputs the second
// gradient adds to the first (the kernel writes a new gradient in place).
TEST(FunctionalTest, FeatureInteractionGradientsIncludingSameOperandTwice) {
  for (kernels::Interaction kind : {kernels::Interaction::kDot, kernels::Interaction::kCat}) {
    Var x = Input({5, 4}, 20), emb = Input({5, 12}, 21);
    CheckGradients([&](Tape& t) { return FeatureInteraction(t, kind, 3, x, emb); }, {{"x", x}, {"emb", emb}}, 22);
    Var z = Input({5, 4}, 23);
    CheckGradients([&](Tape& t) { return FeatureInteraction(t, kind, 1, z, z); }, {{"z", z}}, 24);
  }
}

TEST(FunctionalTest, AddBiasGradients) {
  Var x = Input({6, 3}, 4), b = Input({3}, 5);
  CheckGradients([&](Tape& t) { return AddBias(t, x, b); }, {{"x", x}, {"bias", b}}, 6);
  Tape tape(CpuContext(), false);
  EXPECT_ERROR_CONTAINS(AddBias(tape, x, Input({4}, 7)), "AddBias", "bias must be [3]", "[4]");
}

TEST(FunctionalTest, AddGradientsIncludingSameOperandTwice) {
  Var a = Input({4, 3}, 8), b = Input({4, 3}, 9);
  CheckGradients([&](Tape& t) { return Add(t, a, b); }, {{"a", a}, {"b", b}}, 10);
  Var c = Input({4, 3}, 11);
  CheckGradients([&](Tape& t) { return Add(t, c, c); }, {{"c", c}}, 12);
}

TEST(FunctionalTest, ActivationGradients) {
  Var x1 = InputAwayFromZero({5, 4}, 13);
  CheckGradients([&](Tape& t) { return Relu(t, x1); }, {{"relu x", x1}}, 14);
  Var x2 = InputAwayFromZero({5, 4}, 15);
  CheckGradients([&](Tape& t) { return Elu(t, x2); }, {{"elu x", x2}}, 16);
  Var x3 = InputAwayFromZero({5, 4}, 17);
  CheckGradients([&](Tape& t) { return Activation(t, kernels::Activation::kLeakyRelu, 0.2f, x3); },
                 {{"leaky x", x3}}, 18);
}

TEST(FunctionalTest, DropoutIsIdentityWhenOffAndChecksP) {
  Var x = Input({5, 4}, 19);
  Tape eval(CpuContext(), /*training=*/false);
  ASSERT_OK_AND_ASSIGN(Var y, Dropout(eval, x, 0.5f));
  EXPECT_EQ(y.value().raw_data(), x.value().raw_data());
  Tape train(CpuContext(), /*training=*/true);
  ASSERT_OK_AND_ASSIGN(Var z, Dropout(train, x, 0.0f));
  EXPECT_EQ(z.value().raw_data(), x.value().raw_data());
  EXPECT_ERROR_CONTAINS(Dropout(train, x, 1.0f), "Dropout", "[0, 1)");
  EXPECT_ERROR_CONTAINS(Dropout(train, x, -0.1f), "Dropout", "[0, 1)");
  CheckGradients([&](Tape& t) { return Dropout(t, x, 0.3f); }, {{"x", x}}, 20);  // training=false
  // In training the mask is a function of the context key, the same for
  // every evaluation of the check.
  testing::GradCheckOptions training;
  training.training = true;
  Var x2 = Input({5, 4}, 27);
  CheckGradients([&](Tape& t) { return Dropout(t, x2, 0.3f); }, {{"x", x2}}, 28, training);
}

// An input that needs no gradient (a GNN's gathered features) gets no mask
// and no tape node; its output holds the same bits as a recorded dropout's.
TEST(FunctionalTest, DropoutOfAnInputWithoutGradientKeepsTheSameElements) {
  const Tensor ids = Tensor::Empty({6}, DType::kI64);
  for (int64_t i = 0; i < 6; ++i) ids.data<int64_t>()[i] = 40 + 3 * i;
  for (const bool keyed : {false, true}) {
    Var with_grad(RandomTensor({6, 160}, 31), true);  // 160 columns: the SIMD groups and a tail
    Var without(with_grad.value(), false);
    Tape a(CpuContext(), /*training=*/true), b(CpuContext(), /*training=*/true);
    ASSERT_OK_AND_ASSIGN(Var ya, keyed ? Dropout(a, with_grad, 0.4f, ids) : Dropout(a, with_grad, 0.4f));
    ASSERT_OK_AND_ASSIGN(Var yb, keyed ? Dropout(b, without, 0.4f, ids) : Dropout(b, without, 0.4f));
    EXPECT_TRUE(ya.requires_grad());
    EXPECT_FALSE(yb.requires_grad());
    ASSERT_EQ(ya.value().nbytes(), yb.value().nbytes());
    EXPECT_EQ(std::memcmp(ya.value().raw_data(), yb.value().raw_data(), ya.value().nbytes()), 0) << keyed;
    int64_t zeros = 0;
    for (int64_t i = 0; i < yb.value().numel(); ++i) zeros += yb.value().data<float>()[i] == 0.0f;
    EXPECT_GT(zeros, 0);  // dropout did drop
  }
}

// ReluDropout is Relu then Dropout as one node: the same output, the same
// gradient bits, and the same draw from the tape (a later dropout matches),
// keyed or by position; without training or at p = 0 it is Relu alone.
TEST(FunctionalTest, ReluDropoutGivesReluThenDropoutsBitsAndDraws) {
  const Tensor ids = Tensor::Empty({9}, DType::kI64);
  for (int64_t i = 0; i < 9; ++i) ids.data<int64_t>()[i] = 1000 - 7 * i;
  Tensor labels = Tensor::Empty({9}, DType::kI64);
  for (int64_t i = 0; i < 9; ++i) labels.data<int64_t>()[i] = 16 * i;
  const auto bits = [](const Tensor& a, const Tensor& b) {
    return a.nbytes() == b.nbytes() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
  };
  for (const bool keyed : {false, true}) {
    for (const bool training : {false, true}) {
      for (const float p : {0.0f, 0.45f}) {
        const Tensor ids_or_none = keyed ? ids : Tensor();
        Var x1(RandomTensor({9, 150}, 33), true), x2(x1.value().Clone(), true);
        Tape a(CpuContext(5), training), b(CpuContext(5), training);
        ASSERT_OK_AND_ASSIGN(Var r, Relu(a, x1));
        ASSERT_OK_AND_ASSIGN(Var ya, Dropout(a, r, p, ids_or_none));
        ASSERT_OK_AND_ASSIGN(Var yb, ReluDropout(b, x2, p, ids_or_none));
        EXPECT_TRUE(bits(ya.value(), yb.value())) << keyed << training << p;
        // The next draw of each tape is the same.
        ASSERT_OK_AND_ASSIGN(Var za, Dropout(a, ya, 0.3f));
        ASSERT_OK_AND_ASSIGN(Var zb, Dropout(b, yb, 0.3f));
        EXPECT_TRUE(bits(za.value(), zb.value())) << keyed << training << p;
        ASSERT_OK_AND_ASSIGN(Var la, NllLoss(a, *LogSoftmax(a, za), labels));
        ASSERT_OK_AND_ASSIGN(Var lb, NllLoss(b, *LogSoftmax(b, zb), labels));
        ASSERT_OK(a.Backward(la));
        ASSERT_OK(b.Backward(lb));
        EXPECT_TRUE(bits(x1.grad(), x2.grad())) << keyed << training << p;
      }
    }
  }
  Tape t(CpuContext(), true);
  EXPECT_ERROR_CONTAINS(ReluDropout(t, Input({2, 2}, 35), 1.0f, Tensor()), "ReluDropout", "p must be in [0, 1)");
}

TEST(FunctionalTest, SliceRowsIsAViewAndGradientFillsTheSlice) {
  Var x = Input({7, 3}, 21);
  Tape tape(CpuContext(), false);
  ASSERT_OK_AND_ASSIGN(Var s, SliceRows(tape, x, 2, 5));
  EXPECT_EQ(s.shape(), (Shape{3, 3}));
  EXPECT_EQ(s.value().data<float>(), x.value().data<float>() + 6);
  EXPECT_ERROR_CONTAINS(SliceRows(tape, x, 3, 8), "SliceRows", "[3, 8)", "[7, 3]");
  // Two overlapping slices: both contributions must land in x's gradient.
  CheckGradients(
      [&](Tape& t) -> StatusOr<Var> {
        FS_ASSIGN_OR_RETURN(Var a, SliceRows(t, x, 1, 5));
        FS_ASSIGN_OR_RETURN(Var b, SliceRows(t, x, 3, 7));
        return Add(t, a, b);
      },
      {{"x", x}}, 22);
}

TEST(FunctionalTest, GatherRowsGradientsWithRepeatedIds) {
  Var x = Input({6, 3}, 23);
  Tensor ids64 = Tensor::Empty({5}, DType::kI64);
  Tensor ids32 = Tensor::Empty({5}, DType::kI32);
  const int64_t ids[5] = {4, 0, 4, 2, 4};
  for (int i = 0; i < 5; ++i) {
    ids64.data<int64_t>()[i] = ids[i];
    ids32.data<int32_t>()[i] = static_cast<int32_t>(ids[i]);
  }
  CheckGradients([&](Tape& t) { return GatherRows(t, x, ids64); }, {{"x (i64 ids)", x}}, 24);
  Var x2 = Input({6, 3}, 25);
  CheckGradients([&](Tape& t) { return GatherRows(t, x2, ids32); }, {{"x (i32 ids)", x2}}, 26);
}

struct AggregateCase {
  const char* name;
  kernels::Reduce reduce;
  bool weighted;
  testing::SelfLoops loops;
  int64_t num_dst, num_src;
};
void PrintTo(const AggregateCase& c, std::ostream* os) { *os << c.name; }

class AggregateTest : public ::testing::TestWithParam<AggregateCase> {};

TEST_P(AggregateTest, ForwardMatchesDenseReferenceAndGradientsMatch) {
  const AggregateCase& c = GetParam();
  kernels::Csr csr = testing::RandomBlock(c.num_dst, c.num_src, 4, c.loops, 31);
  if (c.weighted) csr.edge_weight = RandomTensor({csr.num_edges()}, 32, 0.1f, 1.0f);
  GraphBlock block(csr);
  Var x = Input({c.num_src, 3}, 33);
  if (c.reduce != kernels::Reduce::kMax) {
    Tape tape(CpuContext(), false);
    ASSERT_OK_AND_ASSIGN(Var y, Aggregate(tape, block, c.reduce, x));
    testing::Matrix a = testing::DenseAdjacency(csr);
    if (c.reduce == kernels::Reduce::kMean) {
      for (auto& row : a) {
        double deg = 0;
        for (double w : row) deg += w;
        for (double& w : row) w = deg > 0 ? w / deg : 0.0;
      }
    }
    testing::ExpectNear(y.value(), testing::Flatten(testing::MatMulRef(a, testing::ToMatrix(x.value()))), 1e-5,
                        c.name);
  }
  CheckGradients([&](Tape& t) { return Aggregate(t, block, c.reduce, x); }, {{"x", x}}, 34);
}

INSTANTIATE_TEST_SUITE_P(
    Reductions, AggregateTest,
    ::testing::Values(
        AggregateCase{"sum", kernels::Reduce::kSum, false, testing::SelfLoops::kSome, 6, 9},
        AggregateCase{"weighted_sum", kernels::Reduce::kSum, true, testing::SelfLoops::kNone, 6, 9},
        AggregateCase{"mean", kernels::Reduce::kMean, false, testing::SelfLoops::kAll, 6, 9},
        AggregateCase{"mean_full_graph", kernels::Reduce::kMean, false, testing::SelfLoops::kNone, 8, 8},
        AggregateCase{"max", kernels::Reduce::kMax, false, testing::SelfLoops::kSome, 6, 9}),
    [](const ::testing::TestParamInfo<AggregateCase>& info) { return std::string(info.param.name); });

TEST(FunctionalTest, AggregateRejectsWrongRowCount) {
  GraphBlock block(testing::RandomBlock(4, 6, 3, testing::SelfLoops::kNone, 35));
  Tape tape(CpuContext(), false);
  EXPECT_ERROR_CONTAINS(Aggregate(tape, block, kernels::Reduce::kSum, Input({5, 2}, 36)), "Aggregate",
                        "5 rows", "6 sources");
}

TEST(FunctionalTest, LogSoftmaxAndNllLossGradients) {
  Var logits = Input({5, 4}, 37);
  CheckGradients([&](Tape& t) { return LogSoftmax(t, logits); }, {{"logits", logits}}, 38);

  Tensor labels = Tensor::Empty({5}, DType::kI64);
  const int64_t l[5] = {1, -1, 3, 0, 3};  // row 1 is unlabelled
  for (int i = 0; i < 5; ++i) labels.data<int64_t>()[i] = l[i];
  Var logp = Input({5, 4}, 39);
  CheckGradients([&](Tape& t) { return NllLoss(t, logp, labels); }, {{"logp", logp}}, 40);

  Tape tape(CpuContext(), false);
  ASSERT_OK_AND_ASSIGN(Var loss, NllLoss(tape, logp, labels));
  double expected = 0;
  for (int i = 0; i < 5; ++i) {
    if (l[i] >= 0) expected -= logp.value().data<float>()[i * 4 + l[i]];
  }
  EXPECT_NEAR(loss.value().data<float>()[0], expected / 4.0, 1e-6);
}

// A small model end to end, differentiated from the real loss Var.
TEST(FunctionalTest, ChainedModelGradients) {
  Var x = Input({6, 4}, 41), w1 = Input({4, 5}, 42), b1 = Input({5}, 43), w2 = Input({5, 3}, 44);
  Tensor labels = Tensor::Empty({6}, DType::kI32);
  for (int i = 0; i < 6; ++i) labels.data<int32_t>()[i] = i % 3;
  auto forward = [&](Tape& t) -> StatusOr<Var> {
    FS_ASSIGN_OR_RETURN(Var h, MatMul(t, x, w1));
    FS_ASSIGN_OR_RETURN(h, AddBias(t, h, b1));
    FS_ASSIGN_OR_RETURN(h, Elu(t, h));
    FS_ASSIGN_OR_RETURN(h, Dropout(t, h, 0.5f));
    FS_ASSIGN_OR_RETURN(h, MatMul(t, h, w2));
    FS_ASSIGN_OR_RETURN(h, LogSoftmax(t, h));
    return NllLoss(t, h, labels);
  };
  CheckGradients(forward, {{"x", x}, {"w1", w1}, {"b1", b1}, {"w2", w2}}, 45);
}

}  // namespace
}  // namespace foresight::autograd
