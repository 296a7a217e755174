#include "foresight/autograd/transformer.h"

namespace foresight::autograd {

LayerNorm::LayerNorm(const std::string& name, int64_t features, float eps) : Module(name), eps_(eps) {
  features = features > 0 ? features : 0;  // Forward rejects a mismatching input
  Tensor ones = Tensor::Empty({features}, DType::kF32);
  for (int64_t i = 0; i < features; ++i) ones.data<float>()[i] = 1.0f;
  gamma_ = AddParameter("gamma", ones);
  beta_ = AddParameter("beta", Tensor::Zeros({features}, DType::kF32));
}

StatusOr<LayerNormOutputs> LayerNorm::Forward(Tape& tape, const Var& x, const Var& bias, const Var& residual,
                                               bool overwrite_x) {
  return AddLayerNorm(tape, x, bias, residual, gamma_->var(), beta_->var(), eps_, overwrite_x);
}

}  // namespace foresight::autograd
