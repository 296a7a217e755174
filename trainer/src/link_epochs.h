// The epoch loop of link prediction (private to the trainer): train an
// epoch, evaluate filtered MRR / Hits@k on the validation and test triples
// every eval_epochs epochs, keep the test metrics of the best validation
// MRR, stop early on patience, write the metrics file (one JSON line an
// epoch and a final line), checkpoint and resume, and export at the end.
// What trains is behind LinkModel, so every link model (shallow and GNN)
// runs the same loop and writes the same metrics.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "foresight/core/communicator.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/storage/link_triples.h"
#include "foresight/trainer/trainer.h"
#include "link_checkpoint.h"
#include "link_eval.h"

namespace foresight::trainer::internal {

class LinkModel {
 public:
  virtual ~LinkModel() = default;
  // Trains epoch `epoch` (from 0), calling callbacks.on_batch after every
  // step; sets the mean loss and the cache counters of the epoch (0 when
  // the model reads through no cache).
  virtual Status TrainEpoch(int epoch, const TrainCallbacks& callbacks, double* loss, int64_t* hits,
                            int64_t* misses) = 0;
  // Called once before the Evaluate calls of an evaluation (a GNN computes
  // every node's embedding here).
  virtual Status BeginEvaluation() { return Status::OK(); }
  // Filtered ranking of `triples`; `draw` tells the evaluations of one
  // epoch apart (validation 0, test 1) for sampled candidates.
  virtual Status Evaluate(const Tensor& triples, RankMetrics* out, uint64_t draw) = 0;
  // Writes the embeddings (and their names) to `dir`.
  virtual Status Export(const std::string& dir) = 0;
  // Checkpoints (options.checkpoint_dir): Save writes every row and the
  // step count beside `state`; Restore loads them so that the next epoch
  // is state.epoch's. A model that does not write them returns
  // Unimplemented (its options are refused before it trains).
  virtual Status Restore(const std::string& dir, const LinkCheckpointState& state);
  virtual Status Save(const std::string& dir, LinkCheckpointState* state);
};

// {prefix + "mrr", ... "hits1", "hits3", "hits10"}.
nlohmann::json RankMetricsJson(const char* prefix, const RankMetrics& m);

// Runs epochs of `model` on `triples` as described above, up to
// options.epochs, continuing from the checkpoint in options.checkpoint_dir
// with options.resume (checkpoint after every epoch; the metrics file is
// then made durable line by line, see MetricsWriter), and fills `out`
// (epochs_completed, best_epoch, best_val_mrr, test_mrr, test_hits10, the
// history of the epochs run by this call).
// On several ranks (`comm`, else one): every rank runs the loop (the model's
// steps, evaluations, saves and export are collective), rank 0 alone holds
// the checkpoint directory's lock and writes metrics and progress.
Status RunLinkEpochs(const TrainOptions& options, const storage::LinkTriples& triples, LinkModel& model,
                     const TrainCallbacks& callbacks, TrainSummary* out, Communicator* comm = nullptr);

}  // namespace foresight::trainer::internal
