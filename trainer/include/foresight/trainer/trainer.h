// Node-classification training of GraphSAGE / GCN / GAT on a foresight
// dataset: full-graph or sampled mini-batches, evaluation by layer-wise
// full-neighbour inference every epoch, early stopping, JSON-lines metrics,
// checkpoints and resume. Results are a function of (options, dataset) only:
// the same bits for any thread count, and a resumed run repeats an
// uninterrupted one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer {

// One epoch's numbers (the metrics file's line). Epochs count from 1.
// Timings exclude evaluation (except eval_seconds).
struct EpochMetrics {
  int epoch = 0;
  double loss = 0;       // mean of the batches' mean training losses
  double train_acc = 0;  // on the training seeds, from the training forward
  double val_acc = 0;    // layer-wise full-neighbour inference, no dropout
  double test_acc = 0;
  int64_t seeds = 0;           // training seeds processed
  int64_t sampled_edges = 0;   // edges in the blocks (full graph: E per layer)
  double epoch_seconds = 0;    // training time, evaluation excluded
  double seeds_per_second = 0;
  double sampled_edges_per_second = 0;
  // Phases of the training time, and the evaluation time.
  double sample_seconds = 0, gather_seconds = 0, forward_seconds = 0, backward_seconds = 0,
         optimizer_seconds = 0, eval_seconds = 0;
};

struct TrainSummary {
  int epochs_completed = 0;  // including those done before a resume
  bool stopped_early = false;
  int best_epoch = 0;        // first epoch with the best validation accuracy
  double best_val_acc = 0;
  double test_acc = 0;       // test accuracy at best_epoch
  std::vector<EpochMetrics> history;  // the epochs run by this call
};

// Optional observers of training (a GUI, a custom logger). Called on the
// training thread; they must not throw.
struct TrainCallbacks {
  // After each mini-batch (one per epoch in full-graph mode): the epoch
  // counted from 1 as in EpochMetrics, the batch index counted from 0, the
  // batches per epoch and the batch's loss.
  std::function<void(int epoch, int64_t batch, int64_t num_batches, double loss)> on_batch;
  // After each epoch's evaluation.
  std::function<void(const EpochMetrics&)> on_epoch;
};

// Trains as `options` say. With options.progress and no callbacks, a
// progress line per batch and a summary line per epoch go to the terminal
// (core/progress.h); a caller that passes callbacks draws its own.
Status Train(const TrainOptions& options, TrainSummary* out);
Status Train(const TrainOptions& options, const TrainCallbacks& callbacks, TrainSummary* out);

}  // namespace foresight::trainer
