// The dense optimizers behind Optimizer::Create (not installed).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "foresight/autograd/optimizer.h"
#include "foresight/kernels/ops.h"

namespace foresight::autograd::internal {

// State shared by the update loops: one tensor per (parameter, slot), kept
// on the parameter's device and zeroed at creation so checkpoints can
// restore into them before the first step.
class StatefulOptimizer : public Optimizer {
 public:
  std::vector<std::pair<std::string, Tensor*>> StateTensors() override;

 protected:
  StatefulOptimizer(const OptimizerOptions& o, std::vector<Parameter*> p) : Optimizer(o, std::move(p)) {}
  // Creates slot `name` ("m", "v", "momentum") for every parameter.
  Status AddSlot(const std::string& name);
  Tensor& slot(size_t s, size_t param) { return slots_[s].second[param]; }
  // The value, gradient and state of every parameter with a gradient, for
  // the update kernels (kernels::AdamUpdate, SgdUpdate), after checking
  // that each is contiguous f32 of its value's shape and that all of them
  // share the first parameter's device.
  StatusOr<std::vector<kernels::DenseUpdateTensors>> StepTensors();

 private:
  std::vector<std::pair<std::string, std::vector<Tensor>>> slots_;
};

class Sgd final : public StatefulOptimizer {
 public:
  static StatusOr<std::unique_ptr<Optimizer>> Make(const OptimizerOptions& o, std::vector<Parameter*> p);
  Status Step(const ExecContext& ctx) override;

 private:
  using StatefulOptimizer::StatefulOptimizer;
};

// Adam with coupled L2 (decoupled=false) or AdamW (decoupled=true).
class Adam final : public StatefulOptimizer {
 public:
  static StatusOr<std::unique_ptr<Optimizer>> Make(const OptimizerOptions& o, std::vector<Parameter*> p,
                                                   bool decoupled);
  Status Step(const ExecContext& ctx) override;

 private:
  Adam(const OptimizerOptions& o, std::vector<Parameter*> p, bool decoupled)
      : StatefulOptimizer(o, std::move(p)), decoupled_(decoupled) {}
  bool decoupled_;
};

}  // namespace foresight::autograd::internal
