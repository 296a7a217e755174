#include "epoch_runner.h"

#include "foresight/autograd/functional.h"
#include "foresight/kernels/ops.h"

namespace foresight::trainer::internal {

RngKey StepKey(uint64_t seed, int epoch, int64_t batch) {
  return RngKey::FromSeed(seed)
      .Fold(static_cast<uint64_t>(RngPurpose::kDropout))
      .Fold(static_cast<uint64_t>(epoch))
      .Fold(static_cast<uint64_t>(batch));
}

RngKey FirstStepRngKey(const ExecContext& ctx, uint64_t seed, int epoch, int64_t batch) {
  autograd::Tape tape(ctx.WithRng(StepKey(seed, epoch, batch)), /*training=*/true);
  return tape.NextRngKey();
}

Status TrainStep(const RunState& state, autograd::Tape& tape, std::vector<autograd::GraphBlock*>& blocks,
                 const autograd::Var& x, const Tensor& labels, EpochMetrics* m, StepResult* result,
                 const RngKey* x_dropped) {
  Stopwatch watch;
  FS_ASSIGN_OR_RETURN(autograd::Var logits, state.model->Forward(tape, blocks, x, x_dropped));
  FS_ASSIGN_OR_RETURN(autograd::Var logp, autograd::LogSoftmax(tape, logits));
  FS_ASSIGN_OR_RETURN(autograd::Var loss, autograd::NllLoss(tape, logp, labels));
  FS_RETURN_IF_ERROR(kernels::Accuracy(state.ctx, logits.value(), labels, &result->correct, &result->counted));
  FS_ASSIGN_OR_RETURN(result->loss, HostScalar(loss.value()));
  m->forward_seconds += watch.Lap();

  state.optimizer->ZeroGrad();
  result->seeds = labels.numel();
  const bool parallel = state.data_parallel != nullptr && state.data_parallel->comm->size() > 1;
  if (parallel) {
    // Bucketed: the batch's figures now, and the gradient sums start from
    // backward's gradient-ready hooks.
    FS_RETURN_IF_ERROR(BeforeBackward(state.data_parallel, state.optimizer->params(), labels.numel(), result));
    watch.Lap();  // the exchange's time
  }
  FS_RETURN_IF_ERROR(tape.Backward(loss));
  m->backward_seconds += watch.Lap();
  if (parallel) {
    FS_RETURN_IF_ERROR(AllReduceStep(state.data_parallel, state.optimizer->params(), labels.numel(), result));
    watch.Lap();  // its time is the exchange's (DataParallel), not the optimizer's
  }

  FS_RETURN_IF_ERROR(state.optimizer->Step(state.ctx));
  m->optimizer_seconds += watch.Lap();
  return Status::OK();
}

Status MoveParametersTo(Device device, autograd::Module* model) {
  if (device.is_cpu()) return Status::OK();
  for (autograd::Parameter* p : model->Parameters()) {
    FS_ASSIGN_OR_RETURN(p->mutable_value(), p->value().To(device));
  }
  return Status::OK();
}

StatusOr<double> AccuracyOf(const ExecContext& ctx, const Tensor& scores, const Tensor& labels) {
  int64_t correct = 0, counted = 0;
  FS_RETURN_IF_ERROR(kernels::Accuracy(ctx, scores, labels, &correct, &counted));
  return counted == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(counted);
}

}  // namespace foresight::trainer::internal
