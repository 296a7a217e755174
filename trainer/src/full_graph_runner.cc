// Full-graph training: the whole graph is the block of every layer (one
// GraphBlock object, so its transpose and normalisation are built once), one
// step per epoch whose loss is over all training ids; evaluation is the
// full-graph forward without dropout. On a GPU (ctx.device), the features,
// labels and graph live in device memory and every op runs there; the
// transpose and normalisation of the block are then built on the device.
#include "epoch_runner.h"

namespace foresight::trainer::internal {

using autograd::GraphBlock;
using autograd::Tape;
using autograd::Var;

namespace {

class FullGraphRunner : public EpochRunner {
 public:
  explicit FullGraphRunner(const RunState& state) : state_(state) {}

  Status Init() {
    const storage::Dataset& d = *state_.data->dataset;
    const Device device = state_.ctx.device;
    FS_RETURN_IF_ERROR(CheckInputOnDevice(*state_.input, device, state_.options->dataset));
    // Dense rows are converted once; table inputs are recomputed every step
    // (the table changes). On a GPU, the rows, the labels and the graph are
    // copied to it once, here.
    if (!state_.input->table && state_.input->dense.defined()) {
      FS_ASSIGN_OR_RETURN(features_, FeaturesAsF32(state_.ctx, state_.input->dense));
      FS_ASSIGN_OR_RETURN(features_, OnDevice(features_, device));
    }
    FS_ASSIGN_OR_RETURN(train_labels_, MaskedLabels(d.labels(), d.train_ids()));
    FS_ASSIGN_OR_RETURN(val_labels_, MaskedLabels(d.labels(), d.val_ids()));
    FS_ASSIGN_OR_RETURN(test_labels_, MaskedLabels(d.labels(), d.test_ids()));
    FS_ASSIGN_OR_RETURN(train_labels_, OnDevice(train_labels_, device));
    FS_ASSIGN_OR_RETURN(val_labels_, OnDevice(val_labels_, device));
    FS_ASSIGN_OR_RETURN(test_labels_, OnDevice(test_labels_, device));
    kernels::Csr graph = state_.data->graph;
    FS_RETURN_IF_ERROR(CsrOnDevice(device, &graph));
    block_ = GraphBlock(std::move(graph));
    blocks_.assign(state_.model->num_layers(), &block_);
    return Status::OK();
  }

  Status TrainEpoch(int epoch, EpochMetrics* m) override {
    Tape tape(state_.ctx.WithRng(StepKey(state_.options->seed, epoch, 0)), /*training=*/true);
    StepResult r;
    FS_ASSIGN_OR_RETURN(Var x, Input(tape));
    FS_RETURN_IF_ERROR(TrainStep(state_, tape, blocks_, x, train_labels_, m, &r));
    m->loss = r.loss;
    m->train_acc = r.counted == 0 ? 0.0 : static_cast<double>(r.correct) / r.counted;
    m->seeds = state_.data->dataset->train_ids().numel();
    m->sampled_edges = block_.csr().num_edges() * state_.model->num_layers();
    if (state_.callbacks->on_batch) state_.callbacks->on_batch(epoch + 1, 0, 1, r.loss);
    return Status::OK();
  }

  Status Evaluate(double* val_acc, double* test_acc) override {
    Tape tape(state_.ctx, /*training=*/false, /*record=*/false);
    FS_ASSIGN_OR_RETURN(Var x, Input(tape));
    FS_ASSIGN_OR_RETURN(Var logits, state_.model->Forward(tape, blocks_, x));
    FS_ASSIGN_OR_RETURN(*val_acc, AccuracyOf(state_.ctx, logits.value(), val_labels_));
    FS_ASSIGN_OR_RETURN(*test_acc, AccuracyOf(state_.ctx, logits.value(), test_labels_));
    return Status::OK();
  }

 private:
  StatusOr<Var> Input(Tape& tape) {
    if (LearnedNodeTable* learned = state_.input->learned.get()) {
      // Every node's row, one batch of the table per step (no window).
      if (!all_ids_.defined()) all_ids_ = IdRange(0, state_.data->dataset->num_nodes());
      FS_RETURN_IF_ERROR(learned->Enqueue(all_ids_));
      // file+learned: beside the file's rows (features_).
      return learned->Forward(tape, state_.optimizer->step_count() + 1, features_);
    }
    if (!state_.input->table) return Var(features_);
    return InputRows(tape, *state_.model, *state_.input, Tensor());
  }

  RunState state_;
  GraphBlock block_;
  std::vector<GraphBlock*> blocks_;
  Tensor features_;
  Tensor all_ids_;  // learned rows: 0 .. N-1
  Tensor train_labels_, val_labels_, test_labels_;
};

}  // namespace

StatusOr<std::unique_ptr<EpochRunner>> MakeFullGraphRunner(const RunState& state) {
  auto runner = std::make_unique<FullGraphRunner>(state);
  FS_RETURN_IF_ERROR(runner->Init());
  return std::unique_ptr<EpochRunner>(std::move(runner));
}

}  // namespace foresight::trainer::internal
