// Module: a model component that owns Parameters. Layers and user models
// derive from it; Parameters() lists them in a stable order (checkpoints and
// optimizers rely on the order and names).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "foresight/autograd/tape.h"

namespace foresight::autograd {

class Module {
 public:
  Module() = default;
  // Parameters are named "<name>.<param>" ("<param>" when name is empty).
  explicit Module(std::string name) : name_(std::move(name)) {}
  virtual ~Module() = default;
  const std::string& name() const { return name_; }
  // All parameters of this module and its children, in registration order.
  std::vector<Parameter*> Parameters() const;
  void ZeroGrad();

 protected:
  // Creates a parameter named "<name()>.<name>", owned by this module.
  Parameter* AddParameter(const std::string& name, Tensor value);
  // Registers a child whose parameters follow this module's.
  template <typename M> M* AddChild(std::unique_ptr<M> child) {
    M* raw = child.get();
    children_.push_back(std::move(child));
    return raw;
  }

 private:
  std::string name_;
  std::vector<std::unique_ptr<Parameter>> params_;
  std::vector<std::unique_ptr<Module>> children_;
};

// Glorot (Xavier) uniform init from a counter-based stream: value i of
// the tensor is a function of (key, i) only.
Tensor GlorotUniform(const Shape& shape, int64_t fan_in, int64_t fan_out, RngKey key);

}  // namespace foresight::autograd
