// A custom sequence model from foresight's layers: Linear -> one
// TransformerEncoderLayer on packed variable-length sequences (no padding)
// -> Linear, classifying every token by whether its whole sequence's first
// feature sums to more than zero: a token sees that only through attention
// across its own sequence. Trains with Adam and exits 0 when the loss has
// fallen by more than half.
#include <cstdio>
#include <vector>

#include "foresight/autograd/functional.h"
#include "foresight/autograd/layers.h"
#include "foresight/autograd/optimizer.h"
#include "foresight/autograd/transformer.h"

using namespace foresight;
using namespace foresight::autograd;

class SequenceModel : public Module {
 public:
  SequenceModel() : Module("seq") {
    embed_ = AddChild(std::make_unique<Linear>("embed", 4, 16, true, RngKey::FromSeed(1)));
    TransformerEncoderConfig config;
    config.hidden = 16;
    config.heads = 2;
    config.ffn = 32;
    encoder_ = AddChild(std::make_unique<TransformerEncoderLayer>("encoder", config, RngKey::FromSeed(2)));
    head_ = AddChild(std::make_unique<Linear>("head", 16, 2, true, RngKey::FromSeed(3)));
  }
  StatusOr<Var> Forward(Tape& tape, const Var& tokens, const PackedSequences& packed) {
    FS_ASSIGN_OR_RETURN(Var h, embed_->Forward(tape, tokens));
    FS_ASSIGN_OR_RETURN(h, encoder_->Forward(tape, h, packed));
    return head_->Forward(tape, h);
  }

 private:
  Linear* embed_;
  TransformerEncoderLayer* encoder_;
  Linear* head_;
};

int main() {
  // 12 sequences of 1 to 23 tokens, concatenated; 4 features a token.
  std::vector<int64_t> lengths;
  for (int64_t b = 0; b < 12; ++b) lengths.push_back(1 + (b * 7) % 23);
  auto packed = PackedSequences::FromLengths(lengths);
  if (!packed.ok()) return std::fprintf(stderr, "%s\n", packed.status().ToString().c_str()), 1;
  const int64_t n = packed->total_tokens();
  Tensor x = Tensor::Empty({n, 4}, DType::kF32);
  Tensor labels = Tensor::Empty({n}, DType::kI64);
  for (int64_t i = 0; i < n * 4; ++i) x.data<float>()[i] = static_cast<float>((i * 2654435761u >> 7) % 17) / 8.0f - 1.0f;
  for (int64_t b = 0; b < packed->batch(); ++b) {
    float s = 0;
    for (int64_t i = packed->offsets()[b]; i < packed->offsets()[b + 1]; ++i) s += x.data<float>()[i * 4];
    for (int64_t i = packed->offsets()[b]; i < packed->offsets()[b + 1]; ++i) labels.data<int64_t>()[i] = s > 0 ? 1 : 0;
  }

  SequenceModel model;
  OptimizerOptions opt_options;
  opt_options.lr = 0.01f;
  auto optimizer = Optimizer::Create(opt_options, model.Parameters());
  if (!optimizer.ok()) return std::fprintf(stderr, "%s\n", optimizer.status().ToString().c_str()), 1;
  const ExecContext ctx = CpuContext(0);
  float first = 0, last = 0;
  for (int step = 0; step < 150; ++step) {
    Tape tape(ctx.WithRng(RngKey::FromSeed(step)), /*training=*/true);
    auto logits = model.Forward(tape, Var(x), *packed);
    if (!logits.ok()) return std::fprintf(stderr, "%s\n", logits.status().ToString().c_str()), 1;
    auto loss = NllLoss(tape, *LogSoftmax(tape, *logits), labels);
    if (!loss.ok()) return std::fprintf(stderr, "%s\n", loss.status().ToString().c_str()), 1;
    (*optimizer)->ZeroGrad();
    if (Status s = tape.Backward(*loss); !s.ok()) return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
    if (Status s = (*optimizer)->Step(ctx); !s.ok()) return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
    last = loss->value().data<float>()[0];
    if (step == 0) first = last;
  }
  std::printf("sequence encoder: loss %.4f -> %.4f\n", first, last);
  return last < 0.5f * first ? 0 : 1;
}
