#include <cmath>

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
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   w -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// The step count t is shared by all parameters (one per Step call).
Status Adam::Step(const ExecContext& ctx) {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i]->grad().defined()) FS_RETURN_IF_ERROR(CheckStep(i));
  }
  ThreadPool* pool = ctx.pool != nullptr ? ctx.pool : DefaultThreadPool();
  const double t = static_cast<double>(step_ + 1);
  const float b1 = options_.beta1, b2 = options_.beta2, eps = options_.eps;
  const float step_size = static_cast<float>(options_.lr / (1.0 - std::pow(static_cast<double>(b1), t)));
  const float bc2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(static_cast<double>(b2), t)));
  const float coupled_wd = decoupled_ ? 0.0f : options_.weight_decay;
  const float shrink = decoupled_ ? 1.0f - options_.lr * options_.weight_decay : 1.0f;
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter* p = params_[i];
    if (!p->grad().defined()) continue;
    float* w = p->mutable_value().data<float>();
    const float* g = p->grad().data<float>();
    float* m = slot(0, i).data<float>();
    float* v = slot(1, i).data<float>();
    pool->ParallelFor(p->value().numel(), kStepGrain, [=](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        const float gj = g[j] + coupled_wd * w[j];
        const float wj = w[j] * shrink;
        m[j] = b1 * m[j] + (1.0f - b1) * gj;
        v[j] = b2 * v[j] + (1.0f - b2) * gj * gj;
        w[j] = wj - step_size * m[j] / (std::sqrt(v[j]) / bc2_sqrt + eps);
      }
    });
  }
  ++step_;
  return Status::OK();
}

}  // namespace foresight::autograd::internal
