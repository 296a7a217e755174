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

StatusOr<Var> Linear::Forward(Tape& tape, const Var& x) {
  const Shape& w = weight_->value().shape();
  if (w[0] <= 0 || w[1] <= 0) {
    return InvalidArgument("Linear " + name() + ": in and out features must be positive, got weight " +
                           ShapeToString(w));
  }
  return internal::LinearOp(tape, x, weight_->var(), bias_ != nullptr ? bias_->var() : Var(),
                            name().empty() ? "Linear" : name().c_str());
}

}  // namespace foresight::autograd
