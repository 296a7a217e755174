// A custom model from foresight's layers: SAGEConv -> ReLU -> Linear on a
// small ring graph whose labels depend on the neighbourhood. Trains with
// Adam and exits 0 when the loss has fallen by more than half.
#include <cstdio>
#include <vector>

#include "foresight/autograd/functional.h"
#include "foresight/autograd/layers.h"
#include "foresight/autograd/optimizer.h"

using namespace foresight;
using namespace foresight::autograd;

class RingModel : public Module {
 public:
  RingModel() : Module("ring") {
    conv_ = AddChild(std::make_unique<SAGEConv>("conv", 2, 16, RngKey::FromSeed(1)));
    head_ = AddChild(std::make_unique<Linear>("head", 16, 2, true, RngKey::FromSeed(2)));
  }
  StatusOr<Var> Forward(Tape& tape, GraphBlock& block, const Var& x) {
    FS_ASSIGN_OR_RETURN(Var h, conv_->Forward(tape, block, x));
    FS_ASSIGN_OR_RETURN(h, Relu(tape, h));
    return head_->Forward(tape, h);
  }

 private:
  SAGEConv* conv_;
  Linear* head_;
};

int main() {
  const int64_t n = 64;
  // Ring: node v's in-neighbours are v-1 and v+1. Label: does a neighbour
  // carry bit 1 (visible only through aggregation).
  Tensor indptr = Tensor::Empty({n + 1}, DType::kI64);
  Tensor indices = Tensor::Empty({2 * n}, DType::kI64);
  Tensor x = Tensor::Empty({n, 2}, DType::kF32);
  Tensor labels = Tensor::Empty({n}, DType::kI64);
  for (int64_t v = 0; v < n; ++v) {
    indptr.data<int64_t>()[v] = 2 * v;
    indices.data<int64_t>()[2 * v] = (v + n - 1) % n;
    indices.data<int64_t>()[2 * v + 1] = (v + 1) % n;
    const float bit = static_cast<float>((v * 7 / 3) % 2);
    x.data<float>()[2 * v] = bit;
    x.data<float>()[2 * v + 1] = 1.0f - bit;
  }
  indptr.data<int64_t>()[n] = 2 * n;
  for (int64_t v = 0; v < n; ++v) {
    const float a = x.data<float>()[2 * ((v + n - 1) % n)], b = x.data<float>()[2 * ((v + 1) % n)];
    labels.data<int64_t>()[v] = a + b >= 1.0f ? 1 : 0;
  }
  kernels::Csr csr;
  csr.indptr = indptr;
  csr.indices = indices;
  csr.num_src = n;
  GraphBlock block(csr);

  RingModel model;
  OptimizerOptions opt_options;
  opt_options.lr = 0.05f;
  auto optimizer = Optimizer::Create(opt_options, model.Parameters());
  if (!optimizer.ok()) return std::fprintf(stderr, "%s\n", optimizer.status().ToString().c_str()), 1;
  const ExecContext ctx = CpuContext(0);
  float first = 0, last = 0;
  for (int step = 0; step < 100; ++step) {
    Tape tape(ctx.WithRng(RngKey::FromSeed(step)), /*training=*/true);
    auto logits = model.Forward(tape, block, Var(x));
    if (!logits.ok()) return std::fprintf(stderr, "%s\n", logits.status().ToString().c_str()), 1;
    auto loss = NllLoss(tape, *LogSoftmax(tape, *logits), labels);
    if (!loss.ok()) return std::fprintf(stderr, "%s\n", loss.status().ToString().c_str()), 1;
    (*optimizer)->ZeroGrad();
    if (Status s = tape.Backward(*loss); !s.ok()) return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
    if (Status s = (*optimizer)->Step(ctx); !s.ok()) return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
    last = loss->value().data<float>()[0];
    if (step == 0) first = last;
  }
  std::printf("custom model: loss %.4f -> %.4f\n", first, last);
  return last < 0.5f * first ? 0 : 1;
}
