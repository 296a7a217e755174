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
#include <utility>
#include <vector>

#include "foresight/core/communicator.h"
#include "foresight/core/status.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer {

// Seconds a pipeline stage spent working on an epoch's batches, and
// blocked waiting for its input (or for room in its output queue).
struct StageSeconds {
  double busy = 0;
  double wait = 0;
};

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
  // CPU seconds (user + system, every thread of the process) over the same
  // span: the work the epoch took, which other processes' load on a shared
  // machine inflates far less than epoch_seconds. Mini-batch training's
  // pipeline runs ahead, so it includes sampling and gathering of the next
  // epoch's first batches and leaves out this epoch's.
  double epoch_cpu_seconds = 0;
  // Minor page faults of the process over the same span (getrusage
  // ru_minflt): fresh pages the kernel zeroed for the epoch's allocations.
  int64_t epoch_minor_faults = 0;
  double seeds_per_second = 0;
  double sampled_edges_per_second = 0;
  // Phases of the training time, and the evaluation time.
  double sample_seconds = 0, gather_seconds = 0, forward_seconds = 0, backward_seconds = 0,
         optimizer_seconds = 0, eval_seconds = 0;
  // Several ranks: seconds in the steps' gradient exchanges (waiting for
  // the other ranks included), the gradient bytes this rank sent into them
  // and the steps; in the metrics file only then (allreduce_steps > 0).
  double allreduce_seconds = 0;
  int64_t allreduce_bytes = 0, allreduce_steps = 0;
  // Mini-batch training: the feature cache and store I/O of the epoch's
  // batches (attributed by batch: a lookahead read for the next epoch counts
  // there), store device bytes after alignment; the cache's initial fill
  // counts in the first epoch. Zero in full-graph mode.
  int64_t cache_hits = 0, cache_misses = 0, bytes_read = 0, bytes_written = 0;
  // The feature cache's capacity (0 = no cache: rows come straight from the
  // store and hits mean nothing). For the display; not in the metrics file.
  int64_t cache_bytes = 0;
  // Distinct input rows the epoch's batches asked for (= hits + misses).
  int64_t rows_requested = 0;
  // Rows the store read (the misses, and with page companions the rows
  // fetched beside them for later batches) and the I/O operations that took
  // (after coalescing rows that share pages or touch; 0 when the store's
  // reads are memory copies: memory, mmap). rows_read / reads_issued is
  // the rows served per read.
  int64_t rows_read = 0;
  int64_t reads_issued = 0;
  // Mini-batch training: per pipeline stage in order (sample, plan, read,
  // assemble, compute, write_back), busy and waiting seconds for the epoch's
  // batches. Empty in full-graph mode.
  std::vector<std::pair<std::string, StageSeconds>> stages;
  // The stage with the most busy time ("" when there are no stages).
  std::string bottleneck;
};

struct TrainSummary {
  int epochs_completed = 0;  // including those done before a resume
  bool stopped_early = false;
  int best_epoch = 0;        // first epoch with the best validation accuracy
  double best_val_acc = 0;
  double test_acc = 0;       // test accuracy at best_epoch
  // dlrm: best_val_auc is the best validation AUC (best_val_acc stays 0);
  // test_auc and test_logloss are the test metrics at that evaluation.
  double best_val_auc = 0, test_auc = 0, test_logloss = 0;
  // task = link: filtered MRR / Hits@10 at best_epoch (the best validation MRR).
  double best_val_mrr = 0, test_mrr = 0, test_hits10 = 0;
  // sasrec: the best validation NDCG@10 and test HR@10 / NDCG@10 (100
  // sampled negatives) at best_epoch.
  double best_val_ndcg10 = 0, test_hr10 = 0, test_ndcg10 = 0;
  std::vector<EpochMetrics> history;  // the epochs run by this call
  // options.plan_only: the memory plan as text (one line per item), ending
  // with the smallest memory_budget the run accepts.
  std::string memory_plan;
  int64_t minimum_budget_bytes = 0;
  // Several ranks, GNN, allreduce_bucket > 0: the parameters (in the
  // model's order) in the order the gradient buckets were filled after the
  // first step, learned from rank 0's gradient-ready hooks (the same on
  // every rank). Empty otherwise.
  std::vector<int> gradient_bucket_order;
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
  // Mini-batch training, after each batch (before on_batch): the current
  // epoch's pipeline stage seconds so far, as in EpochMetrics::stages.
  std::function<void(const std::vector<std::pair<std::string, StageSeconds>>& stages)> on_stages;
};

// Trains as `options` say. With options.progress and no callbacks, a
// progress line per batch and a summary line per epoch go to the terminal
// (core/progress.h); a caller that passes callbacks draws its own.
Status Train(const TrainOptions& options, TrainSummary* out);
Status Train(const TrainOptions& options, const TrainCallbacks& callbacks, TrainSummary* out);
// The same on the ranks of `comm` (the two above use WorldCommunicator():
// the MPI world under mpirun, else one process). With several ranks every
// rank calls this with the same options; each trains its part of every
// global batch and the gradients are summed (GNN mini-batch training), so
// the steps are the one-rank run's; rank 0 alone writes the metrics file,
// the checkpoints and the progress display, and every rank's *out holds
// the same figures.
Status Train(const TrainOptions& options, const TrainCallbacks& callbacks, Communicator* comm, TrainSummary* out);

}  // namespace foresight::trainer
