#include <cmath>
#include <vector>

#include "foresight/kernels/ops.h"
#include "optimizers.h"

namespace foresight::autograd::internal {

StatusOr<std::unique_ptr<Optimizer>> Adam::Make(const OptimizerOptions& o, std::vector<Parameter*> p,
                                                bool decoupled) {
  std::unique_ptr<Adam> opt(new Adam(o, std::move(p), decoupled));
  FS_RETURN_IF_ERROR(opt->AddSlot("m"));
  FS_RETURN_IF_ERROR(opt->AddSlot("v"));
  return std::unique_ptr<Optimizer>(std::move(opt));
}

// Bias-corrected Adam as torch.optim.Adam / AdamW compute it:
//   adam:  g += wd * w (coupled L2, the GCN/GAT papers' setting)
//   adamw: w *= 1 - lr * wd (decoupled)
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2  (wd w, b1 m, b2 v and the
//   shrink w * (1 - lr wd) fused into their adds: std::fma, the same in the
//   scalar and the AVX2 loop)
//   w -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// The step count t is shared by all parameters (one per Step call). The
// loop is kernels::AdamUpdate, on the parameters' device.
Status Adam::Step(const ExecContext& ctx) {
  FS_ASSIGN_OR_RETURN(std::vector<kernels::DenseUpdateTensors> params, StepTensors());
  const double t = static_cast<double>(step_ + 1);
  kernels::AdamUpdateArgs a;
  a.beta1 = options_.beta1;
  a.beta2 = options_.beta2;
  a.eps = options_.eps;
  a.step_size = static_cast<float>(options_.lr / (1.0 - std::pow(static_cast<double>(a.beta1), t)));
  a.bc2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(static_cast<double>(a.beta2), t)));
  a.coupled_wd = decoupled_ ? 0.0f : options_.weight_decay;
  a.shrink = decoupled_ ? std::fma(-options_.lr, options_.weight_decay, 1.0f) : 1.0f;  // explicit, as the update's
  FS_RETURN_IF_ERROR(kernels::AdamUpdate(ctx, a, params));
  ++step_;
  return Status::OK();
}

}  // namespace foresight::autograd::internal
