// The terminal progress of training (core/progress.h), the display of
// `foresight train` and of any library caller that asks for progress and
// gives no observers of its own: during an epoch a status line (batches
// done, rate, ETA, running loss, the pipeline's bottleneck stage), ending
// in a summary line with the epoch's loss, accuracies, rate, cache hits and
// bytes read, and where the time went. Every time and rate on the summary
// line is the metrics file's (EpochMetrics), never a clock of its own.
// Private to the trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "foresight/core/progress.h"
#include "foresight/trainer/trainer.h"

namespace foresight::trainer::internal {

class ProgressReporter {
 public:
  // options: where lines go (tests pass a sink); the unit is always "batch".
  explicit ProgressReporter(int total_epochs, ProgressOptions options = {})
      : total_epochs_(total_epochs), options_(std::move(options)) {}
  // A run resumed from a checkpoint: says which epoch training goes on from
  // ("resuming from epoch K+1 of N: K done in DIR"), once, before the first.
  void OnResume(int epochs_done, const std::string& checkpoint_dir);
  // The epoch's stage times so far; the next OnBatch shows the busiest.
  void OnStages(const std::vector<std::pair<std::string, StageSeconds>>& stages);
  // epoch counts from 1, as in TrainCallbacks.
  void OnBatch(int epoch, int64_t batch, int64_t num_batches, double loss);
  void OnEpoch(const EpochMetrics& m);

 private:
  void StartEpoch(int epoch, int64_t num_batches);
  std::string Label(int epoch) const;  // "epoch 3/10"

  const int total_epochs_;
  const ProgressOptions options_;
  int epoch_ = -1;
  double loss_sum_ = 0;
  int64_t batches_ = 0;
  std::string bottleneck_;  // "read 63%" or ""
  std::unique_ptr<Progress> bar_;
};

// The stage with the most busy seconds ("" for none).
std::string Bottleneck(const std::vector<std::pair<std::string, StageSeconds>>& stages);

// "read 63%": the busiest stage and its share of all stages' busy time;
// "" when there are none (or none was busy).
std::string DescribeBottleneck(const std::vector<std::pair<std::string, StageSeconds>>& stages);

// The epoch's summary line: "loss 0.1234 train 0.9000 val 0.8000 test
// 0.8100 | 12.3k seeds/s", then "| cache 83% hits, 12.3 MiB read" when the
// epoch read rows, then "| bottleneck read 63%" when there are stages, else
// each phase's share of the training time ("| sample 12% gather 30% ..."),
// then "| eval 1.23s".
std::string EpochSummary(const EpochMetrics& m);

// The epoch's final line: "<label>: <batches> batch in <epoch_seconds>
// (<batches / epoch_seconds> batch/s) | <EpochSummary>", the training time
// and rate being the metrics' (evaluation excluded; it follows as "eval").
std::string EpochLine(const std::string& label, int64_t batches, const EpochMetrics& m);

}  // namespace foresight::trainer::internal
