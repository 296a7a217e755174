#include "sasrec_model.h"

#include <cmath>
#include <string>

#include "foresight/autograd/functional.h"
#include "foresight/kernels/ops.h"

namespace foresight::trainer::internal {

namespace {

using autograd::Tape;
using autograd::Var;

// out = scale * items + pos_table[positions]: the authors' input (item
// embedding times sqrt(hidden) plus the position's embedding).
StatusOr<Var> SasrecInput(Tape& tape, const Var& items, const Var& pos_table, const Tensor& positions, float scale) {
  const int64_t t = items.shape()[0], d = items.shape()[1];
  Tensor out = Tensor::Empty({t, d}, DType::kF32);
  const float* x = items.value().data<float>();
  const float* p = pos_table.value().data<float>();
  const int64_t* pid = positions.data<int64_t>();
  float* o = out.data<float>();
  tape.ctx().pool->ParallelFor(t, 256, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float* pr = p + pid[i] * d;
      for (int64_t j = 0; j < d; ++j) o[i * d + j] = scale * x[i * d + j] + pr[j];
    }
  });
  return tape.RecordGrad({items, pos_table}, out, [items, pos_table, positions, scale, t, d](
                                                       const ExecContext& ctx, const Tensor& g) -> Status {
    if (items.requires_grad()) {
      Tensor gi = Tensor::Empty({t, d}, DType::kF32);
      const float* gp = g.data<float>();
      float* o = gi.data<float>();
      for (int64_t i = 0; i < t * d; ++i) o[i] = scale * gp[i];
      FS_RETURN_IF_ERROR(items.AccumulateGrad(ctx, gi));
    }
    if (pos_table.requires_grad()) {
      // Summed in token order on one thread: the same bits for any pool.
      Tensor gp = Tensor::Zeros(pos_table.shape(), DType::kF32);
      const float* src = g.data<float>();
      const int64_t* pid = positions.data<int64_t>();
      float* dst = gp.data<float>();
      for (int64_t i = 0; i < t; ++i) {
        for (int64_t j = 0; j < d; ++j) dst[pid[i] * d + j] += src[i * d + j];
      }
      FS_RETURN_IF_ERROR(pos_table.AccumulateGrad(ctx, gp));
    }
    return Status::OK();
  });
}

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
// log(1 + exp(x)) without overflow.
double Softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

}  // namespace

SasrecModel::SasrecModel(const SasrecConfig& c) : Module("sasrec"), config_(c) {
  const RngKey init = RngKey::FromSeed(c.seed).Fold(0x53415352);  // "SASR"
  positions_ = AddParameter("positions", autograd::GlorotUniform({c.max_length, c.hidden}, c.max_length, c.hidden,
                                                                 init.Fold(0)));
  autograd::TransformerEncoderConfig block;
  block.hidden = c.hidden;
  block.heads = c.heads;
  block.ffn = c.hidden;
  block.causal = true;
  block.norm_first = true;
  block.dropout = c.dropout;
  block.attn_dropout = c.dropout;
  block.eps = 1e-8f;
  for (int i = 0; i < c.blocks; ++i) {
    blocks_.push_back(AddChild(std::make_unique<autograd::TransformerEncoderLayer>(
        "block" + std::to_string(i), block, init.Fold(1 + static_cast<uint64_t>(i)))));
  }
  final_norm_ = AddChild(std::make_unique<autograd::LayerNorm>("final_norm", c.hidden, 1e-8f));
}

StatusOr<Var> SasrecModel::Forward(Tape& tape, const Var& items, const Tensor& positions,
                                   const autograd::PackedSequences& packed) {
  FS_ASSIGN_OR_RETURN(Var x, SasrecInput(tape, items, positions_->var(), positions,
                                         std::sqrt(static_cast<float>(config_.hidden))));
  if (tape.training() && config_.dropout > 0.0f) {
    FS_ASSIGN_OR_RETURN(x, autograd::Dropout(tape, x, config_.dropout));
  }
  for (autograd::TransformerEncoderLayer* block : blocks_) {
    FS_ASSIGN_OR_RETURN(x, block->Forward(tape, x, packed));
  }
  FS_ASSIGN_OR_RETURN(autograd::LayerNormOutputs y, final_norm_->Forward(tape, x));
  return y.out;
}

StatusOr<Var> NextItemBceLoss(Tape& tape, const Var& h, const Var& pos, const Var& neg) {
  const int64_t t = h.shape()[0], d = h.shape()[1];
  if (t == 0) return InvalidArgument("NextItemBceLoss: no tokens");
  const float* hp = h.value().data<float>();
  const float* pp = pos.value().data<float>();
  const float* np = neg.value().data<float>();
  // Per-token logit gradients, kept for the backward.
  Tensor dlogits = Tensor::Empty({t, 2}, DType::kF32);
  float* dl = dlogits.data<float>();
  std::vector<double> losses(static_cast<size_t>(t));
  const float inv = 1.0f / static_cast<float>(t);
  tape.ctx().pool->ParallelFor(t, 256, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float sp = 0.0f, sn = 0.0f;
      for (int64_t j = 0; j < d; ++j) {
        sp += hp[i * d + j] * pp[i * d + j];
        sn += hp[i * d + j] * np[i * d + j];
      }
      losses[static_cast<size_t>(i)] = Softplus(-sp) + Softplus(sn);
      dl[2 * i] = (Sigmoid(sp) - 1.0f) * inv;
      dl[2 * i + 1] = Sigmoid(sn) * inv;
    }
  });
  double total = 0.0;
  for (double l : losses) total += l;  // in token order: the same bits for any pool
  Tensor out = Tensor::Empty({1}, DType::kF32);
  out.data<float>()[0] = static_cast<float>(total / static_cast<double>(t));
  return tape.RecordGrad({h, pos, neg}, out, [h, pos, neg, dlogits, t, d](const ExecContext& ctx,
                                                                         const Tensor& g) -> Status {
    const float scale = g.data<float>()[0];
    const float* hp = h.value().data<float>();
    const float* pp = pos.value().data<float>();
    const float* np = neg.value().data<float>();
    const float* dl = dlogits.data<float>();
    Tensor dh = Tensor::Empty({t, d}, DType::kF32), dp = Tensor::Empty({t, d}, DType::kF32),
           dn = Tensor::Empty({t, d}, DType::kF32);
    float* dhp = dh.data<float>();
    float* dpp = dp.data<float>();
    float* dnp = dn.data<float>();
    ctx.pool->ParallelFor(t, 256, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const float a = scale * dl[2 * i], c = scale * dl[2 * i + 1];
        for (int64_t j = 0; j < d; ++j) {
          dhp[i * d + j] = a * pp[i * d + j] + c * np[i * d + j];
          dpp[i * d + j] = a * hp[i * d + j];
          dnp[i * d + j] = c * hp[i * d + j];
        }
      }
    });
    if (h.requires_grad()) FS_RETURN_IF_ERROR(h.AccumulateGrad(ctx, dh));
    if (pos.requires_grad()) FS_RETURN_IF_ERROR(pos.AccumulateGrad(ctx, dp));
    if (neg.requires_grad()) FS_RETURN_IF_ERROR(neg.AccumulateGrad(ctx, dn));
    return Status::OK();
  });
}

}  // namespace foresight::trainer::internal
