// Dense optimizers over a list of Parameters. State tensors are kept per
// parameter in the same order, so checkpoints can save and restore them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "foresight/autograd/tape.h"

namespace foresight::autograd {

struct OptimizerOptions {
  std::string kind = "adam";  // sgd | adam | adamw. Default: adam
  float lr = 0.01f;           // Default: 0.01
  float weight_decay = 0.0f;  // coupled L2 for sgd/adam, decoupled for adamw
  float momentum = 0.0f;      // sgd only
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
};

class Optimizer {
 public:
  static StatusOr<std::unique_ptr<Optimizer>> Create(const OptimizerOptions& options,
                                                     std::vector<Parameter*> params);
  virtual ~Optimizer() = default;
  // Applies one update from the parameters' grads (undefined grad = skip).
  virtual Status Step(const ExecContext& ctx) = 0;
  void ZeroGrad();

  // State for checkpoints: named tensors ("<param>.m", "<param>.v") and the
  // step count.
  virtual std::vector<std::pair<std::string, Tensor*>> StateTensors() = 0;
  int64_t step_count() const { return step_; }
  void set_step_count(int64_t s) { step_ = s; }
  const std::vector<Parameter*>& params() const { return params_; }

 protected:
  Optimizer(const OptimizerOptions& o, std::vector<Parameter*> p) : options_(o), params_(std::move(p)) {}
  OptimizerOptions options_;
  std::vector<Parameter*> params_;
  int64_t step_ = 0;
};

}  // namespace foresight::autograd
