#include "foresight/autograd/optimizer.h"

#include <cmath>
#include <set>

#include "optimizers.h"

namespace foresight::autograd {

namespace {

Status ValidateOptions(const OptimizerOptions& o) {
  auto bad = [&](const std::string& field, double v, const char* expected) {
    return InvalidArgument("optimizer " + o.kind + ": " + field + " = " + std::to_string(v) + ", expected " +
                           expected);
  };
  if (!(o.lr >= 0.0f) || !std::isfinite(o.lr)) return bad("lr", o.lr, "a finite value >= 0");
  if (!(o.weight_decay >= 0.0f) || !std::isfinite(o.weight_decay)) {
    return bad("weight_decay", o.weight_decay, "a finite value >= 0");
  }
  if (o.kind == "sgd") {
    if (!(o.momentum >= 0.0f && o.momentum < 1.0f)) return bad("momentum", o.momentum, "a value in [0, 1)");
  } else {
    if (!(o.beta1 >= 0.0f && o.beta1 < 1.0f)) return bad("beta1", o.beta1, "a value in [0, 1)");
    if (!(o.beta2 >= 0.0f && o.beta2 < 1.0f)) return bad("beta2", o.beta2, "a value in [0, 1)");
    if (!(o.eps > 0.0f) || !std::isfinite(o.eps)) return bad("eps", o.eps, "a finite value > 0");
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> Optimizer::Create(const OptimizerOptions& options,
                                                       std::vector<Parameter*> params) {
  if (options.kind != "sgd" && options.kind != "adam" && options.kind != "adamw") {
    return InvalidArgument("unknown optimizer kind '" + options.kind + "' (expected sgd, adam or adamw)");
  }
  FS_RETURN_IF_ERROR(ValidateOptions(options));
  std::set<Parameter*> seen;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == nullptr) return InvalidArgument("optimizer: parameter #" + std::to_string(i) + " is null");
    if (!seen.insert(params[i]).second) {
      return InvalidArgument("optimizer: parameter '" + params[i]->name() + "' is listed twice");
    }
    if (params[i]->value().dtype() != DType::kF32) {
      return InvalidArgument("optimizer: parameter '" + params[i]->name() + "' is " +
                             params[i]->value().ToString() + ", expected f32");
    }
  }
  if (options.kind == "sgd") return internal::Sgd::Make(options, std::move(params));
  return internal::Adam::Make(options, std::move(params), options.kind == "adamw");
}

void Optimizer::ZeroGrad() {
  for (Parameter* p : params_) p->ZeroGrad();
}

namespace internal {

std::vector<std::pair<std::string, Tensor*>> StatefulOptimizer::StateTensors() {
  std::vector<std::pair<std::string, Tensor*>> out;
  for (size_t i = 0; i < params_.size(); ++i) {
    for (auto& [name, tensors] : slots_) out.emplace_back(params_[i]->name() + "." + name, &tensors[i]);
  }
  return out;
}

Status StatefulOptimizer::AddSlot(const std::string& name) {
  std::vector<Tensor> tensors;
  tensors.reserve(params_.size());
  for (Parameter* p : params_) {
    FS_ASSIGN_OR_RETURN(Tensor t, Tensor::EmptyOn(p->value().device(), p->value().shape(), DType::kF32));
    FS_RETURN_IF_ERROR(t.ZeroFill());
    tensors.push_back(std::move(t));
  }
  slots_.emplace_back(name, std::move(tensors));
  return Status::OK();
}

StatusOr<std::vector<kernels::DenseUpdateTensors>> StatefulOptimizer::StepTensors() {
  std::vector<kernels::DenseUpdateTensors> out;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Parameter& p = *params_[i];
    const Tensor& w = p.value();
    const Tensor& g = p.grad();
    if (!g.defined()) continue;
    if (w.dtype() != DType::kF32 || !w.is_contiguous() || g.dtype() != DType::kF32 || !g.is_contiguous() ||
        g.shape() != w.shape() || g.device() != w.device()) {
      return InvalidArgument("optimizer " + options_.kind + ": parameter '" + p.name() + "' value " + w.ToString() +
                             " and grad " + g.ToString() + " must be contiguous f32 of one shape on one device");
    }
    if (!out.empty() && w.device() != out.front().w.device()) {
      return InvalidArgument("optimizer " + options_.kind + ": parameter '" + p.name() + "' is on " +
                             w.device().ToString() + " but an earlier one is on " +
                             out.front().w.device().ToString() + " (one optimizer steps one device's parameters)");
    }
    for (const auto& [name, tensors] : slots_) {
      const Tensor& t = tensors[i];
      if (t.device() != w.device() || t.shape() != w.shape() || t.dtype() != DType::kF32 || !t.is_contiguous()) {
        return InvalidArgument("optimizer " + options_.kind + ": state '" + p.name() + "." + name + "' is " +
                               t.ToString() + ", expected contiguous f32 " + ShapeToString(w.shape()) + " on " +
                               w.device().ToString());
      }
    }
    kernels::DenseUpdateTensors d;
    d.w = w;
    d.g = g;
    if (!slots_.empty()) d.s0 = slots_[0].second[i];
    if (slots_.size() > 1) d.s1 = slots_[1].second[i];
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace internal

}  // namespace foresight::autograd
