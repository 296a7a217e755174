// The differentiable ops of recommendation models: DLRM's feature
// interaction and the binary cross-entropy loss on logits.
#include "foresight/autograd/functional.h"
#include "internal.h"

namespace foresight::autograd {

using internal::AccumulateWith;
using internal::EmptyF32;

StatusOr<Var> FeatureInteraction(Tape& tape, kernels::Interaction kind, int64_t num_tables, const Var& x,
                                 const Var& emb) {
  FS_RETURN_IF_ERROR(internal::CheckMatrix(x, "FeatureInteraction", "x"));
  FS_RETURN_IF_ERROR(internal::CheckMatrix(emb, "FeatureInteraction", "emb"));
  if (num_tables < 1 || emb.shape()[1] % num_tables != 0) {
    return InvalidArgument("FeatureInteraction: emb " + ShapeToString(emb.shape()) + " is not " +
                           std::to_string(num_tables) + " tables wide");
  }
  const ExecContext& ctx = tape.ctx();
  const int64_t e = emb.shape()[1] / num_tables;
  FS_ASSIGN_OR_RETURN(
      Tensor y, EmptyF32(x.value().device(),
                         {x.shape()[0], kernels::InteractionWidth(kind, num_tables, x.shape()[1], e)}));
  FS_RETURN_IF_ERROR(kernels::FeatureInteraction(ctx, kind, num_tables, x.value(), emb.value(), &y));
  return tape.RecordGrad({x, emb}, y, [kind, num_tables, x, emb](const ExecContext& ctx, const Tensor& gy) -> Status {
    // The kernel overwrites both outputs, so a gradient not created yet is
    // written in place (no copy); one that holds a contribution gets a sum.
    auto output_for = [](const Var& v, Tensor* out, bool* in_place) -> Status {
      *in_place = v.requires_grad() && !v.grad().defined();
      if (*in_place) {
        FS_ASSIGN_OR_RETURN(*out, v.NewGrad());
      } else {
        FS_ASSIGN_OR_RETURN(*out, EmptyF32(v.value().device(), v.shape()));
      }
      return Status::OK();
    };
    Tensor gx, ge;
    bool gx_in_place = false, ge_in_place = false;
    FS_RETURN_IF_ERROR(output_for(x, &gx, &gx_in_place));
    FS_RETURN_IF_ERROR(output_for(emb, &ge, &ge_in_place));
    FS_RETURN_IF_ERROR(
        kernels::FeatureInteractionBackward(ctx, kind, num_tables, x.value(), emb.value(), gy, &gx, &ge));
    if (x.requires_grad() && !gx_in_place) FS_RETURN_IF_ERROR(x.AccumulateGrad(ctx, gx));
    if (emb.requires_grad() && !ge_in_place) FS_RETURN_IF_ERROR(emb.AccumulateGrad(ctx, ge));
    return Status::OK();
  });
}

StatusOr<Var> BceWithLogitsLoss(Tape& tape, const Var& logits, const Tensor& targets) {
  if (!logits.defined()) return InvalidArgument("BceWithLogitsLoss: logits are undefined");
  const ExecContext& ctx = tape.ctx();
  const Device device = logits.value().device();
  const bool want_grad = tape.recording() && logits.requires_grad();
  Tensor grad;
  if (want_grad) {
    FS_ASSIGN_OR_RETURN(grad, EmptyF32(device, logits.shape()));
  }
  float loss = 0.0f;
  FS_RETURN_IF_ERROR(kernels::BceWithLogits(ctx, logits.value(), targets, &loss, want_grad ? &grad : nullptr));
  Tensor host = Tensor::Empty({1}, DType::kF32);
  host.data<float>()[0] = loss;
  FS_ASSIGN_OR_RETURN(Tensor y, host.To(device));
  if (!want_grad) return Var(y);
  return tape.RecordGrad({logits}, y, [logits, grad](const ExecContext& ctx, const Tensor& gy) -> Status {
    FS_ASSIGN_OR_RETURN(Tensor gy_host, gy.To(Device::Cpu()));
    const float scale = gy_host.data<float>()[0];
    if (scale == 1.0f) return logits.AccumulateGrad(ctx, grad);
    return AccumulateWith(ctx, logits, [&](Tensor* gx) { return kernels::Scale(ctx, grad, scale, gx); });
  });
}

}  // namespace foresight::autograd
