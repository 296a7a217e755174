#include "optimizers.h"

#include "foresight/kernels/ops.h"

namespace foresight::autograd::internal {

StatusOr<std::unique_ptr<Optimizer>> Sgd::Make(const OptimizerOptions& o, std::vector<Parameter*> p) {
  std::unique_ptr<Sgd> opt(new Sgd(o, std::move(p)));
  if (o.momentum > 0.0f) FS_RETURN_IF_ERROR(opt->AddSlot("momentum"));
  return std::unique_ptr<Optimizer>(std::move(opt));
}

// g += wd * w; buf = momentum * buf + g (buf starts at 0, so the first step
// sets buf = g as PyTorch does); w -= lr * buf: kernels::SgdUpdate on the
// parameters' device.
Status Sgd::Step(const ExecContext& ctx) {
  FS_ASSIGN_OR_RETURN(std::vector<kernels::DenseUpdateTensors> params, StepTensors());
  FS_RETURN_IF_ERROR(kernels::SgdUpdate(ctx, options_.lr, options_.weight_decay, options_.momentum, params));
  ++step_;
  return Status::OK();
}

}  // namespace foresight::autograd::internal
