// The two ways an epoch runs: over the full graph (one step per epoch) or
// over sampled mini-batches. Both fill an EpochMetrics' training fields and
// evaluate validation and test accuracy without dropout. Private to the
// trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "foresight/autograd/graph_block.h"
#include "foresight/autograd/optimizer.h"
#include "foresight/autograd/tape.h"
#include "foresight/core/context.h"
#include "foresight/core/stopwatch.h"
#include "foresight/trainer/models.h"
#include "foresight/trainer/train_options.h"
#include "foresight/trainer/trainer.h"
#include "data_parallel.h"
#include "node_data.h"
#include "node_input.h"

namespace foresight::trainer::internal {

// What a runner works with; owned by Train, outlives the runner.
struct RunState {
  ExecContext ctx;
  const TrainOptions* options = nullptr;
  NodeData* data = nullptr;
  const NodeInput* input = nullptr;  // what layer 0 reads (node_input.h)
  GnnModel* model = nullptr;
  autograd::Optimizer* optimizer = nullptr;
  // Runners call on_batch with the epoch counted from 1 (TrainCallbacks').
  const TrainCallbacks* callbacks = nullptr;
  // Several ranks: each step's gradients are summed across them (null or
  // one rank: a one-process run).
  DataParallel* data_parallel = nullptr;
  // options->plan_only: where the mini-batch runner's Init writes the plan.
  TrainSummary* plan_out = nullptr;
};

class EpochRunner {
 public:
  virtual ~EpochRunner() = default;
  // Trains epoch `epoch` (counted from 0) and fills m's loss, train_acc,
  // seeds, sampled_edges and phase timings.
  virtual Status TrainEpoch(int epoch, EpochMetrics* m) = 0;
  // Accuracy of the current parameters on the validation and test ids.
  virtual Status Evaluate(double* val_acc, double* test_acc) = 0;
};

StatusOr<std::unique_ptr<EpochRunner>> MakeFullGraphRunner(const RunState& state);
StatusOr<std::unique_ptr<EpochRunner>> MakeMiniBatchRunner(const RunState& state);

// The RNG stream of training step (epoch, batch): dropout draws from it.
RngKey StepKey(uint64_t seed, int epoch, int64_t batch);
// The first key the step's tape (on ctx.WithRng(StepKey(...))) draws: its
// first dropout's, the input features' in the GNN models.
RngKey FirstStepRngKey(const ExecContext& ctx, uint64_t seed, int epoch, int64_t batch);

struct StepResult {
  double loss = 0;
  int64_t correct = 0;
  int64_t counted = 0;
  int64_t seeds = 0;  // the batch's seeds (all ranks' parts when data parallel)
};

// One optimisation step: forward through `blocks` from x, log-softmax + NLL
// on `labels` (i64, -1 = not scored), accuracy of the training logits,
// backward, optimizer update. Adds forward/backward/optimizer seconds to m.
// x_dropped: x is the first layer's dropped-out input already, dropped with
// this key (GnnModel::Forward).
Status TrainStep(const RunState& state, autograd::Tape& tape, std::vector<autograd::GraphBlock*>& blocks,
                 const autograd::Var& x, const Tensor& labels, EpochMetrics* m, StepResult* result,
                 const RngKey* x_dropped = nullptr);

// Moves every parameter of `model` to `device` (nothing to do on the CPU).
Status MoveParametersTo(Device device, autograd::Module* model);

// Fraction of rows with label >= 0 whose argmax is the label (0 when none).
StatusOr<double> AccuracyOf(const ExecContext& ctx, const Tensor& scores, const Tensor& labels);

}  // namespace foresight::trainer::internal
