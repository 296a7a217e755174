// Mini-batch training: seeds in SeedOrder's per-epoch order, neighbourhoods
// sampled per (epoch, batch), input features gathered as f32; evaluation by
// layer-wise full-neighbour inference on the validation and test ids.
#include <memory>

#include "epoch_runner.h"
#include "foresight/kernels/ops.h"
#include "foresight/sampler/neighbor_sampler.h"
#include "foresight/sampler/seed_order.h"
#include "layerwise_inference.h"

namespace foresight::trainer::internal {

using autograd::GraphBlock;
using autograd::Tape;
using autograd::Var;

namespace {

class MiniBatchRunner : public EpochRunner {
 public:
  explicit MiniBatchRunner(const RunState& state) : state_(state), whole_graph_(state.data->graph) {}

  Status Init() {
    const storage::Dataset& d = *state_.data->dataset;
    const TrainOptions& o = *state_.options;
    sampler_ = std::make_unique<sampler::NeighborSampler>(state_.data->graph, o.fanouts, o.seed);
    order_ = std::make_unique<sampler::SeedOrder>(d.train_ids(), o.batch_size, o.seed);
    FS_RETURN_IF_ERROR(order_->status());
    eval_ids_ = ConcatIds(d.val_ids(), d.test_ids());
    FS_ASSIGN_OR_RETURN(eval_labels_, GatherLabels(d.labels(), eval_ids_));
    return Status::OK();
  }

  Status TrainEpoch(int epoch, EpochMetrics* m) override {
    const storage::Dataset& d = *state_.data->dataset;
    const int64_t num_batches = order_->num_batches();
    double loss_sum = 0;
    int64_t correct = 0, counted = 0;
    for (int64_t b = 0; b < num_batches; ++b) {
      Stopwatch watch;
      const Tensor seeds = order_->Batch(epoch, b);
      sampler::SampledBatch batch;
      FS_RETURN_IF_ERROR(sampler_->Sample(state_.ctx, seeds, epoch, b, &batch));
      m->sample_seconds += watch.Lap();

      Tensor x = Tensor::Empty({batch.input_nodes.numel(), d.feature_dim()}, DType::kF32);
      FS_RETURN_IF_ERROR(kernels::GatherRows(state_.ctx, d.features(), batch.input_nodes, &x));
      FS_ASSIGN_OR_RETURN(Tensor labels, GatherLabels(d.labels(), batch.seeds));
      std::vector<GraphBlock> blocks;
      blocks.reserve(batch.blocks.size());
      for (kernels::Csr& csr : batch.blocks) blocks.emplace_back(std::move(csr));
      std::vector<GraphBlock*> block_ptrs;
      for (GraphBlock& g : blocks) block_ptrs.push_back(&g);
      m->gather_seconds += watch.Lap();

      Tape tape(state_.ctx.WithRng(StepKey(state_.options->seed, epoch, b)), /*training=*/true);
      StepResult r;
      FS_RETURN_IF_ERROR(TrainStep(state_, tape, block_ptrs, Var(x), labels, m, &r));
      loss_sum += r.loss;
      correct += r.correct;
      counted += r.counted;
      m->seeds += batch.seeds.numel();
      m->sampled_edges += batch.sampled_edges;
      if (state_.callbacks->on_batch) state_.callbacks->on_batch(epoch + 1, b, num_batches, r.loss);
    }
    m->loss = num_batches == 0 ? 0.0 : loss_sum / static_cast<double>(num_batches);
    m->train_acc = counted == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(counted);
    return Status::OK();
  }

  Status Evaluate(double* val_acc, double* test_acc) override {
    const storage::Dataset& d = *state_.data->dataset;
    LayerwiseOutputs outputs;
    FS_RETURN_IF_ERROR(LayerwiseInference(state_.ctx, *state_.model, *sampler_, whole_graph_,
                                          d.features(), state_.options->eval_batch_size, {eval_ids_},
                                          /*want_embeddings=*/false, /*whole_graph_per_layer=*/false,
                                          &outputs));
    const int64_t nv = d.val_ids().numel();
    const int64_t n = eval_ids_.numel();
    FS_ASSIGN_OR_RETURN(*val_acc, AccuracyOf(state_.ctx, outputs.logits[0].Slice(0, 0, nv),
                                             eval_labels_.Slice(0, 0, nv)));
    FS_ASSIGN_OR_RETURN(*test_acc, AccuracyOf(state_.ctx, outputs.logits[0].Slice(0, nv, n),
                                              eval_labels_.Slice(0, nv, n)));
    return Status::OK();
  }

 private:
  RunState state_;
  GraphBlock whole_graph_;  // gcn's evaluation: the normalised graph, built once
  // Samples training blocks and, between epochs, builds the full-neighbour
  // blocks of evaluation (never both at once).
  std::unique_ptr<sampler::NeighborSampler> sampler_;
  std::unique_ptr<sampler::SeedOrder> order_;
  Tensor eval_ids_;
  Tensor eval_labels_;
};

}  // namespace

StatusOr<std::unique_ptr<EpochRunner>> MakeMiniBatchRunner(const RunState& state) {
  auto runner = std::make_unique<MiniBatchRunner>(state);
  FS_RETURN_IF_ERROR(runner->Init());
  return std::unique_ptr<EpochRunner>(std::move(runner));
}

}  // namespace foresight::trainer::internal
