// Reverse-mode autodiff without a framework. A Tape lives for one training
// step: ops record a backward closure on it, Backward() replays them in
// reverse. Layers with fused kernels record one node. Backward nodes may have
// side effects (the fused embedding update writes rows). A Tape built with
// record=false is no-grad mode (evaluation): ops run forward only.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/tensor.h"

namespace foresight::autograd {

class Parameter;

// A value in the computation: a shared handle (copies alias). grad is
// allocated (zeroed) on first accumulation during Backward.
class Var {
 public:
  Var() = default;
  explicit Var(Tensor value, bool requires_grad = false);

  bool defined() const { return impl_ != nullptr; }
  const Tensor& value() const { return impl_->value; }
  // The gradient after Backward (undefined if none reached this Var).
  const Tensor& grad() const { return impl_->grad; }
  bool requires_grad() const { return impl_ && impl_->requires_grad; }
  const Shape& shape() const { return impl_->value.shape(); }
  Parameter* parameter() const { return impl_ ? impl_->parameter : nullptr; }

  // Adds g into grad (allocating it on first use). Used by backward nodes.
  Status AccumulateGrad(const ExecContext& ctx, const Tensor& g) const;
  // The grad tensor, allocated and zeroed if absent (for kernels that
  // accumulate in place).
  StatusOr<Tensor> MutableGrad() const;
  // Allocates the grad tensor without initialising it, for a caller that
  // overwrites every element (a kernel with beta = 0, a backward kernel
  // that writes its whole output): zeroing it first would be a wasted pass
  // over memory. FailedPrecondition when the grad already exists.
  StatusOr<Tensor> NewGrad() const;

 private:
  friend class Parameter;
  friend class Tape;
  struct Impl {
    Tensor value;
    Tensor grad;
    bool requires_grad = false;
    Parameter* parameter = nullptr;
    int pending_uses = 0;  // backward nodes still to run that feed grad
  };
  std::shared_ptr<Impl> impl_;
};

// A learnable tensor owned by a Module. Its Var is a leaf that persists
// across steps; each step's Backward accumulates into grad().
class Parameter {
 public:
  Parameter(std::string name, Tensor value);
  // The Var points back at its Parameter, so a Parameter stays put.
  Parameter(const Parameter&) = delete;
  Parameter& operator=(const Parameter&) = delete;
  const std::string& name() const { return name_; }
  const Tensor& value() const { return var_.value(); }
  Tensor& mutable_value() { return var_.impl_->value; }
  const Tensor& grad() const { return var_.grad(); }
  Tensor& mutable_grad() { return var_.impl_->grad; }
  const Var& var() const { return var_; }
  // Drops the gradient (the next Backward allocates a fresh one), so an
  // optimizer skips parameters that no later step reaches, as PyTorch does.
  void ZeroGrad();
  // Called once per Backward, as soon as this parameter's gradient is final
  // (overlapped all-reduce hooks in here). Fires for every parameter that a
  // recorded op of that tape used, even if no gradient reached it (grad()
  // then is undefined); parameters the step did not use get no call.
  void SetGradReadyHook(std::function<void(Parameter&)> hook) { hook_ = std::move(hook); }

 private:
  friend class Tape;
  std::string name_;
  Var var_;
  std::function<void(Parameter&)> hook_;
};

class Tape {
 public:
  // `training` enables dropout; `record` enables backward recording.
  Tape(const ExecContext& ctx, bool training, bool record = true);

  const ExecContext& ctx() const { return ctx_; }
  bool training() const { return training_; }
  bool recording() const { return record_; }

  // A fresh RNG stream for the next random op of this step (dropout): the
  // n-th call returns ctx.rng.Fold(n), so a step's random numbers depend only
  // on the step key and the op order.
  RngKey NextRngKey();

  using BackwardFn = std::function<Status(const ExecContext& ctx)>;
  // Records that `output` was computed from `inputs`; `fn` reads
  // output.grad() and accumulates into the inputs' grads. Not recorded when
  // !recording() or when no input requires grad (then output does not
  // require grad either). Returns the output with requires_grad set.
  Var Record(const std::vector<Var>& inputs, Tensor output, BackwardFn fn);
  // Same, for the common case of a fn that only needs the output's gradient
  // (a closure cannot capture the Var that Record has yet to return).
  // grad_out is always defined when fn runs.
  using GradFn = std::function<Status(const ExecContext& ctx, const Tensor& grad_out)>;
  Var RecordGrad(const std::vector<Var>& inputs, Tensor output, GradFn fn);

  // Runs the recorded nodes in reverse, seeding d loss/d loss = 1 (loss must
  // have one element). Parameter hooks fire as gradients become final. Each
  // node is released once it has run, so Backward runs once per tape.
  Status Backward(const Var& loss);

 private:
  struct Node {
    std::vector<Var> inputs;
    Var output;
    BackwardFn fn;
  };
  ExecContext ctx_;
  bool training_;
  bool record_;
  uint64_t rng_counter_ = 0;
  std::vector<Node> nodes_;
};

}  // namespace foresight::autograd
