// Same seed -> same bits with 1 or 2 threads: forward, backward and an
// optimizer step of a model using every layer.
#include "foresight/autograd/layers.h"
#include "foresight/autograd/optimizer.h"
#include "grad_check.h"

namespace foresight::autograd {
namespace {

class Stack : public Module {
 public:
  explicit Stack(RngKey key) : Module("stack") {
    gat_ = AddChild(std::make_unique<GATConv>("stack.gat", 16, 8, 2, true, 0.2f, 0.3f, key.Fold(0)));
    sage_ = AddChild(std::make_unique<SAGEConv>("stack.sage", 16, 12, key.Fold(1)));
    gcn_ = AddChild(std::make_unique<GCNConv>("stack.gcn", 12, 5, key.Fold(2)));
    head_ = AddChild(std::make_unique<GATConv>("stack.head", 5, 4, 3, false, 0.2f, 0.3f, key.Fold(3)));
    fc_ = AddChild(std::make_unique<Linear>("stack.fc", 4, 4, true, key.Fold(4)));
  }
  StatusOr<Var> Loss(Tape& tape, GraphBlock& g, const Var& x, const Tensor& labels) {
    FS_ASSIGN_OR_RETURN(Var h, gat_->Forward(tape, g, x));
    FS_ASSIGN_OR_RETURN(h, Elu(tape, h));
    FS_ASSIGN_OR_RETURN(h, Dropout(tape, h, 0.5f));
    FS_ASSIGN_OR_RETURN(h, sage_->Forward(tape, g, h));
    FS_ASSIGN_OR_RETURN(h, Relu(tape, h));
    FS_ASSIGN_OR_RETURN(h, gcn_->Forward(tape, g, h));
    FS_ASSIGN_OR_RETURN(h, head_->Forward(tape, g, h));
    FS_ASSIGN_OR_RETURN(h, fc_->Forward(tape, h));
    FS_ASSIGN_OR_RETURN(h, LogSoftmax(tape, h));
    return NllLoss(tape, h, labels);
  }

 private:
  GATConv* gat_;
  SAGEConv* sage_;
  GCNConv* gcn_;
  GATConv* head_;
  Linear* fc_;
};

struct Result {
  float loss;
  std::vector<Tensor> grads, values;
};

Result RunModel(int threads) {
  ThreadPool pool(threads);
  const ExecContext ctx = CpuContext(123, &pool);
  const int64_t n = 3000;
  GraphBlock graph(testing::RandomBlock(n, n, 12, testing::SelfLoops::kSome, 7));
  Var x(testing::RandomTensor({n, 16}, 8));
  Tensor labels = Tensor::Empty({n}, DType::kI64);
  for (int64_t i = 0; i < n; ++i) labels.data<int64_t>()[i] = (i * 7) % 5 == 4 ? -1 : (i * 7) % 5;
  Stack model(RngKey::FromSeed(9));
  OptimizerOptions o;
  o.weight_decay = 5e-4f;
  auto opt = Optimizer::Create(o, model.Parameters());
  EXPECT_TRUE(opt.ok());
  Result r;
  for (int step = 0; step < 2; ++step) {
    Tape tape(ctx.WithRng(ctx.rng.Fold(step)), true);
    auto loss = model.Loss(tape, graph, x, labels);
    EXPECT_TRUE(loss.ok()) << loss.status().ToString();
    if (!loss.ok()) return r;
    r.loss = loss->value().data<float>()[0];
    EXPECT_OK(tape.Backward(*loss));
    if (step == 0) {
      for (Parameter* p : model.Parameters()) r.grads.push_back(p->grad().Clone());
    }
    EXPECT_OK((*opt)->Step(ctx));
    (*opt)->ZeroGrad();
  }
  for (Parameter* p : model.Parameters()) r.values.push_back(p->value().Clone());
  return r;
}

TEST(DeterminismTest, OneAndTwoThreadsGiveTheSameBits) {
  Result one = RunModel(1), two = RunModel(2);
  ASSERT_EQ(one.grads.size(), two.grads.size());
  ASSERT_FALSE(one.grads.empty());
  EXPECT_EQ(std::memcmp(&one.loss, &two.loss, sizeof(float)), 0) << one.loss << " vs " << two.loss;
  for (size_t i = 0; i < one.grads.size(); ++i) {
    testing::ExpectBitwiseEqual(one.grads[i], two.grads[i], "grad #" + std::to_string(i));
    testing::ExpectBitwiseEqual(one.values[i], two.values[i], "value #" + std::to_string(i));
  }
}

}  // namespace
}  // namespace foresight::autograd
