#include "optimizers.h"

namespace foresight::autograd::internal {

StatusOr<std::unique_ptr<Optimizer>> Sgd::Make(const OptimizerOptions& o, std::vector<Parameter*> p) {
  std::unique_ptr<Sgd> opt(new Sgd(o, std::move(p)));
  if (o.momentum > 0.0f) FS_RETURN_IF_ERROR(opt->AddSlot("momentum"));
  return std::unique_ptr<Optimizer>(std::move(opt));
}

// g += wd * w; buf = momentum * buf + g (buf starts at 0, so the first step
// sets buf = g as PyTorch does); w -= lr * buf.
Status Sgd::Step(const ExecContext& ctx) {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i]->grad().defined()) FS_RETURN_IF_ERROR(CheckStep(i));
  }
  ThreadPool* pool = ctx.pool != nullptr ? ctx.pool : DefaultThreadPool();
  const float lr = options_.lr, wd = options_.weight_decay, mu = options_.momentum;
  const bool use_momentum = mu > 0.0f;
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter* p = params_[i];
    if (!p->grad().defined()) continue;
    float* w = p->mutable_value().data<float>();
    const float* g = p->grad().data<float>();
    float* buf = use_momentum ? slot(0, i).data<float>() : nullptr;
    pool->ParallelFor(p->value().numel(), kStepGrain, [=](int64_t b, int64_t e) {
      if (use_momentum) {
        for (int64_t j = b; j < e; ++j) {
          buf[j] = mu * buf[j] + (g[j] + wd * w[j]);
          w[j] -= lr * buf[j];
        }
      } else {
        for (int64_t j = b; j < e; ++j) w[j] -= lr * (g[j] + wd * w[j]);
      }
    });
  }
  ++step_;
  return Status::OK();
}

}  // namespace foresight::autograd::internal
