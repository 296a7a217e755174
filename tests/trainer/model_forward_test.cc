// GnnModel::Forward against its layers one by one: the fused ReLU + next
// dropout and an input that the pipeline gathered and dropped already
// (kernels::GatherRowsDropout) give the bits of ForwardLayer's separate
// ops, forward and backward, for each model.
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "foresight/autograd/functional.h"
#include "foresight/kernels/keyed_dropout.h"
#include "foresight/kernels/ops.h"
#include "foresight/trainer/models.h"
#include "testing/testing.h"

namespace foresight::trainer {
namespace {

using autograd::GraphBlock;
using autograd::Tape;
using autograd::Var;

constexpr int64_t kTableRows = 400, kFeatures = 40;

// A block of num_dst destinations (the first num_dst sources) with random
// in-edges from num_src sources.
kernels::Csr RandomBlock(int64_t num_dst, int64_t num_src, uint64_t seed) {
  std::mt19937_64 rng(seed);
  kernels::Csr c;
  c.num_src = num_src;
  c.indptr = Tensor::Empty({num_dst + 1}, DType::kI64);
  std::vector<int64_t> idx;
  c.indptr.data<int64_t>()[0] = 0;
  for (int64_t v = 0; v < num_dst; ++v) {
    const int64_t deg = 1 + static_cast<int64_t>(rng() % 6);
    for (int64_t k = 0; k < deg; ++k) idx.push_back(static_cast<int64_t>(rng() % num_src));
    c.indptr.data<int64_t>()[v + 1] = static_cast<int64_t>(idx.size());
  }
  c.indices = Tensor::Empty({static_cast<int64_t>(idx.size())}, DType::kI64);
  std::memcpy(c.indices.raw_data(), idx.data(), idx.size() * sizeof(int64_t));
  return c;
}

Tensor RandomTable(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Tensor t = Tensor::Empty({kTableRows, kFeatures}, DType::kF32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.nbytes() == b.nbytes() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

struct Batch {
  Tensor table = RandomTable(51);
  Tensor input_nodes;  // distinct rows of the table, destinations first
  Tensor labels;
  std::vector<GraphBlock> blocks;
  std::vector<GraphBlock*> ptrs;
  Tensor x;  // the input nodes' rows

  explicit Batch(int layers) {
    // Sources per layer: 90 -> 40 -> 15 (-> 6).
    const int64_t sizes[] = {90, 40, 15, 6};
    input_nodes = Tensor::Empty({sizes[0]}, DType::kI64);
    for (int64_t i = 0; i < sizes[0]; ++i) input_nodes.data<int64_t>()[i] = (i * 37 + 5) % kTableRows;
    for (int l = 0; l < layers; ++l) {
      blocks.emplace_back(RandomBlock(sizes[l + 1], sizes[l], 60 + static_cast<uint64_t>(l)));
      blocks.back().set_src_ids(input_nodes);
    }
    for (GraphBlock& b : blocks) ptrs.push_back(&b);
    labels = Tensor::Empty({sizes[layers]}, DType::kI64);
    for (int64_t i = 0; i < sizes[layers]; ++i) labels.data<int64_t>()[i] = i % 5;
    x = Tensor::Empty({sizes[0], kFeatures}, DType::kF32);
    EXPECT_TRUE(kernels::GatherRows(CpuContext(), table, input_nodes, &x).ok());
  }
};

struct StepOut {
  Tensor logits;
  std::vector<Tensor> grads;
};

std::unique_ptr<GnnModel> MakeModel(const std::string& kind, int layers) {
  ModelConfig c;
  c.kind = kind;
  c.in_features = kFeatures;
  c.num_classes = 5;
  c.hidden = 24;
  c.layers = layers;
  c.heads = 2;
  c.dropout = 0.4f;
  c.input_dropout = 0.3f;
  c.seed = 3;
  auto m = CreateModel(c);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(m).value();
}

// One training step's logits and parameter gradients: `how` runs the
// forward on a fresh tape keyed by `key`.
template <typename Fn>
StatusOr<StepOut> Step(GnnModel& model, const Batch& batch, RngKey key, Fn how) {
  model.ZeroGrad();
  Tape tape(CpuContext().WithRng(key), /*training=*/true);
  FS_ASSIGN_OR_RETURN(Var logits, how(tape));
  FS_ASSIGN_OR_RETURN(Var logp, autograd::LogSoftmax(tape, logits));
  FS_ASSIGN_OR_RETURN(Var loss, autograd::NllLoss(tape, logp, batch.labels));
  FS_RETURN_IF_ERROR(tape.Backward(loss));
  StepOut out{logits.value().Clone(), {}};
  for (autograd::Parameter* p : model.Parameters()) out.grads.push_back(p->grad().Clone());
  return out;
}

class ModelForwardTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(ModelForwardTest, FusedAndPreDroppedInputsGiveTheLayersBits) {
  const auto [kind, layers] = GetParam();
  auto model = MakeModel(kind, layers);
  Batch batch(layers);
  const RngKey key = RngKey::FromSeed(77);

  // Reference: ForwardLayer one layer at a time (its own Dropout, ReLU / ELU).
  ASSERT_OK_AND_ASSIGN(StepOut ref, Step(*model, batch, key, [&](Tape& tape) -> StatusOr<Var> {
    Var h(batch.x);
    for (int l = 0; l < layers; ++l) {
      FS_ASSIGN_OR_RETURN(h, model->ForwardLayer(tape, l, *batch.ptrs[l], h));
    }
    return h;
  }));
  // Forward: ReLU and the next dropout fused.
  ASSERT_OK_AND_ASSIGN(StepOut fused, Step(*model, batch, key, [&](Tape& tape) {
    return model->Forward(tape, batch.ptrs, Var(batch.x));
  }));
  // The input gathered and dropped in one pass with the tape's first key.
  const RngKey first = Tape(CpuContext().WithRng(key), true).NextRngKey();
  Tensor dropped = Tensor::Empty(batch.x.shape(), DType::kF32);
  ASSERT_OK(kernels::GatherRowsDropout(CpuContext().WithRng(first), model->config().InputDropout(0), batch.table,
                                       batch.input_nodes, &dropped));
  ASSERT_OK_AND_ASSIGN(StepOut pre, Step(*model, batch, key, [&](Tape& tape) {
    return model->Forward(tape, batch.ptrs, Var(dropped), &first);
  }));

  for (const StepOut* s : {&fused, &pre}) {
    EXPECT_TRUE(SameBits(ref.logits, s->logits)) << kind << " " << layers << (s == &pre ? " pre-dropped" : " fused");
    ASSERT_EQ(ref.grads.size(), s->grads.size());
    for (size_t i = 0; i < ref.grads.size(); ++i) {
      EXPECT_TRUE(SameBits(ref.grads[i], s->grads[i]))
          << kind << " " << layers << ", parameter " << model->Parameters()[i]->name()
          << (s == &pre ? " pre-dropped" : " fused");
    }
  }

  // An input dropped with another key is refused, not trained on.
  const RngKey other = first.Fold(1);
  Tape tape(CpuContext().WithRng(key), /*training=*/true);
  EXPECT_ERROR_CONTAINS(model->Forward(tape, batch.ptrs, Var(dropped), &other), "another key");
  // So is a pre-dropped input on a step that drops nothing (evaluation).
  Tape eval(CpuContext().WithRng(key), /*training=*/false);
  EXPECT_ERROR_CONTAINS(model->Forward(eval, batch.ptrs, Var(dropped), &first), "drops none");
}

INSTANTIATE_TEST_SUITE_P(Models, ModelForwardTest,
                         ::testing::Combine(::testing::Values("sage", "gcn", "gat"), ::testing::Values(2, 3)));

}  // namespace
}  // namespace foresight::trainer
