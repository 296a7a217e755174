// The terminal progress of training (core/progress.h): during an epoch a
// status line "epoch k/E  b/B batches, rate, ETA | loss, bottleneck stage",
// and after it one line with the epoch's loss and accuracies. Private to
// the trainer.
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
  explicit ProgressReporter(int total_epochs) : total_epochs_(total_epochs) {}
  // The epoch's stage times so far; the next OnBatch shows the busiest.
  void OnStages(const std::vector<std::pair<std::string, StageSeconds>>& stages);
  // epoch counts from 1, as in TrainCallbacks.
  void OnBatch(int epoch, int64_t batch, int64_t num_batches, double loss);
  void OnEpoch(const EpochMetrics& m);

 private:
  int total_epochs_;
  int current_epoch_ = -1;
  std::string bottleneck_;  // "read 63%" or ""
  std::unique_ptr<Progress> progress_;
};

// "read 63%": the busiest stage and its share of all stages' busy time;
// "" when there are none.
std::string DescribeBottleneck(const std::vector<std::pair<std::string, StageSeconds>>& stages);

}  // namespace foresight::trainer::internal
