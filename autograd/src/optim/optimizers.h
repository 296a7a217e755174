// The dense optimizers behind Optimizer::Create (not installed).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "foresight/autograd/optimizer.h"

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
  // Checks that parameter i can be stepped on the CPU: host f32 contiguous
  // value and grad, state on the host.
  Status CheckStep(size_t i) const;

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

// Elements per chunk of the update loops (fixed, so chunking never depends
// on the thread count).
constexpr int64_t kStepGrain = 1 << 15;

}  // namespace foresight::autograd::internal
