#include "foresight/autograd/module.h"

#include <cmath>

namespace foresight::autograd {

std::vector<Parameter*> Module::Parameters() const {
  std::vector<Parameter*> out;
  out.reserve(params_.size());
  for (const auto& p : params_) out.push_back(p.get());
  for (const auto& c : children_) {
    std::vector<Parameter*> sub = c->Parameters();
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

void Module::ZeroGrad() {
  for (Parameter* p : Parameters()) p->ZeroGrad();
}

Parameter* Module::AddParameter(const std::string& name, Tensor value) {
  params_.push_back(std::make_unique<Parameter>(name_.empty() ? name : name_ + "." + name, std::move(value)));
  return params_.back().get();
}

Tensor GlorotUniform(const Shape& shape, int64_t fan_in, int64_t fan_out, RngKey key) {
  Tensor t = Tensor::Empty(shape, DType::kF32);
  const int64_t fans = fan_in + fan_out;
  const float bound = fans > 0 ? static_cast<float>(std::sqrt(6.0 / static_cast<double>(fans))) : 0.0f;
  float* p = t.data<float>();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) p[i] = (2.0f * key.Uniform(static_cast<uint64_t>(i), 0) - 1.0f) * bound;
  return t;
}

}  // namespace foresight::autograd
