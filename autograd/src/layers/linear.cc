#include "foresight/autograd/layers.h"

#include <algorithm>

#include "../internal.h"

namespace foresight::autograd {

Linear::Linear(const std::string& name, int64_t in, int64_t out, bool bias, RngKey init) : Module(name) {
  // Negative sizes are clamped so construction cannot fail; Forward rejects them.
  in = std::max<int64_t>(in, 0);
  out = std::max<int64_t>(out, 0);
  weight_ = AddParameter("weight", GlorotUniform({in, out}, in, out, init));
  if (bias) bias_ = AddParameter("bias", Tensor::Zeros({out}, DType::kF32));
}

namespace {

Status CheckPositive(const Parameter* weight, const std::string& name) {
  const Shape& w = weight->value().shape();
  if (w[0] <= 0 || w[1] <= 0) {
    return InvalidArgument("Linear " + name + ": in and out features must be positive, got weight " +
                           ShapeToString(w));
  }
  return Status::OK();
}

}  // namespace

StatusOr<Var> Linear::Forward(Tape& tape, const Var& x) {
  FS_RETURN_IF_ERROR(CheckPositive(weight_, name()));
  return internal::LinearOp(tape, x, weight_->var(), bias_ != nullptr ? bias_->var() : Var(),
                            name().empty() ? "Linear" : name().c_str());
}

StatusOr<Var> Linear::ForwardRelu(Tape& tape, const Var& x) {
  FS_RETURN_IF_ERROR(CheckPositive(weight_, name()));
  return internal::LinearReluOp(tape, x, weight_->var(), bias_ != nullptr ? bias_->var() : Var(),
                                name().empty() ? "Linear" : name().c_str());
}

}  // namespace foresight::autograd
