#include "foresight/autograd/tape.h"

#include <algorithm>

#include "foresight/kernels/ops.h"

namespace foresight::autograd {

// ---- Var ----

Var::Var(Tensor value, bool requires_grad) : impl_(std::make_shared<Impl>()) {
  impl_->value = std::move(value);
  impl_->requires_grad = requires_grad;
}

StatusOr<Tensor> Var::MutableGrad() const {
  if (impl_ == nullptr) return FailedPrecondition("MutableGrad on an undefined Var");
  if (!impl_->grad.defined()) {
    FS_ASSIGN_OR_RETURN(Tensor g, Tensor::EmptyOn(impl_->value.device(), impl_->value.shape(), DType::kF32));
    FS_RETURN_IF_ERROR(g.ZeroFill());
    impl_->grad = std::move(g);
  }
  return impl_->grad;
}

StatusOr<Tensor> Var::NewGrad() const {
  if (impl_ == nullptr) return FailedPrecondition("NewGrad on an undefined Var");
  if (impl_->grad.defined()) return FailedPrecondition("NewGrad: the gradient exists already");
  FS_ASSIGN_OR_RETURN(impl_->grad, Tensor::EmptyOn(impl_->value.device(), impl_->value.shape(), DType::kF32));
  return impl_->grad;
}

Status Var::AccumulateGrad(const ExecContext& ctx, const Tensor& g) const {
  if (impl_ == nullptr) return FailedPrecondition("AccumulateGrad on an undefined Var");
  FS_RETURN_IF_ERROR(CheckDefined(g, "gradient"));
  if (g.shape() != impl_->value.shape()) {
    return InvalidArgument("AccumulateGrad: gradient " + g.ToString() + " does not match value " +
                           impl_->value.ToString());
  }
  FS_RETURN_IF_ERROR(CheckDType(g, DType::kF32, "gradient"));
  if (!impl_->grad.defined()) {
    // Copy rather than adopt: `g` may alias another Var's gradient (Add
    // passes one tensor to both inputs), and this grad is accumulated into.
    FS_ASSIGN_OR_RETURN(Tensor copy, Tensor::EmptyOn(impl_->value.device(), g.shape(), DType::kF32));
    FS_RETURN_IF_ERROR(copy.CopyFrom(g));
    impl_->grad = std::move(copy);
    return Status::OK();
  }
  return kernels::Add(ctx, impl_->grad, g, &impl_->grad);
}

// ---- Parameter ----

Parameter::Parameter(std::string name, Tensor value) : name_(std::move(name)), var_(std::move(value), true) {
  var_.impl_->parameter = this;
}

void Parameter::ZeroGrad() { var_.impl_->grad = Tensor(); }

// ---- Tape ----

Tape::Tape(const ExecContext& ctx, bool training, bool record)
    : ctx_(ctx), training_(training), record_(record) {}

RngKey Tape::NextRngKey() { return ctx_.rng.Fold(rng_counter_++); }

Var Tape::Record(const std::vector<Var>& inputs, Tensor output, BackwardFn fn) {
  Var out(std::move(output), false);
  if (!record_) return out;
  const bool any = std::any_of(inputs.begin(), inputs.end(), [](const Var& v) { return v.requires_grad(); });
  if (!any) return out;
  out.impl_->requires_grad = true;
  nodes_.push_back(Node{inputs, out, std::move(fn)});
  return out;
}

Var Tape::RecordGrad(const std::vector<Var>& inputs, Tensor output, GradFn fn) {
  // The closure holds the output Var; the Var holds nothing of the tape, so
  // there is no cycle.
  auto slot = std::make_shared<Var>();
  Var out = Record(inputs, std::move(output),
                   [slot, fn = std::move(fn)](const ExecContext& ctx) { return fn(ctx, slot->grad()); });
  *slot = out;
  return out;
}

namespace {

// The distinct parameters among a node's inputs (a node may list one twice).
void DistinctParams(const std::vector<Var>& inputs, std::vector<Parameter*>* out) {
  out->clear();
  for (const Var& v : inputs) {
    Parameter* p = v.parameter();
    if (p != nullptr && v.requires_grad() && std::find(out->begin(), out->end(), p) == out->end()) {
      out->push_back(p);
    }
  }
}

}  // namespace

Status Tape::Backward(const Var& loss) {
  if (!record_) return FailedPrecondition("Tape::Backward on a no-grad tape (built with record=false)");
  if (!loss.defined()) return InvalidArgument("Tape::Backward: the loss Var is undefined");
  if (loss.value().numel() != 1) {
    return InvalidArgument("Tape::Backward: the loss must have one element, got " + loss.value().ToString());
  }
  if (nodes_.empty()) {
    return FailedPrecondition(
        "Tape::Backward: nothing recorded (no op had an input requiring grad, or Backward already ran)");
  }
  if (!loss.requires_grad()) {
    return InvalidArgument("Tape::Backward: the loss does not depend on any Var that requires grad");
  }

  // Count, per parameter, the nodes that still have to contribute to its
  // gradient; the hook fires when the count reaches zero.
  std::vector<Parameter*> params;
  for (const Node& n : nodes_) {
    DistinctParams(n.inputs, &params);
    for (Parameter* p : params) p->var_.impl_->pending_uses = 0;
  }
  for (const Node& n : nodes_) {
    DistinctParams(n.inputs, &params);
    for (Parameter* p : params) ++p->var_.impl_->pending_uses;
  }

  Tensor one = Tensor::Empty({1}, DType::kF32);
  one.data<float>()[0] = 1.0f;
  FS_ASSIGN_OR_RETURN(Tensor seed, one.To(loss.value().device()));
  FS_ASSIGN_OR_RETURN(seed, seed.Reshape(loss.value().shape()));
  FS_RETURN_IF_ERROR(loss.AccumulateGrad(ctx_, seed));

  while (!nodes_.empty()) {
    const size_t index = nodes_.size() - 1;
    Node node = std::move(nodes_.back());
    nodes_.pop_back();
    if (node.output.grad().defined()) {
      Status s = node.fn(ctx_);
      if (!s.ok()) {
        nodes_.clear();
        return s.WithContext("Tape::Backward: recorded op #" + std::to_string(index));
      }
    }
    DistinctParams(node.inputs, &params);
    for (Parameter* p : params) {
      if (--p->var_.impl_->pending_uses == 0 && p->hook_) p->hook_(*p);
    }
  }
  return Status::OK();
}

}  // namespace foresight::autograd
