// The terminal progress of training (core/progress.h): during an epoch a
// status line "epoch k/E  b/B batches, rate, ETA | loss", and after it one
// line with the epoch's loss and accuracies. Private to the trainer.
#pragma once

#include <cstdint>
#include <memory>

#include "foresight/core/progress.h"
#include "foresight/trainer/trainer.h"

namespace foresight::trainer::internal {

class ProgressReporter {
 public:
  explicit ProgressReporter(int total_epochs) : total_epochs_(total_epochs) {}
  // epoch counts from 1, as in TrainCallbacks.
  void OnBatch(int epoch, int64_t batch, int64_t num_batches, double loss);
  void OnEpoch(const EpochMetrics& m);

 private:
  int total_epochs_;
  int current_epoch_ = -1;
  std::unique_ptr<Progress> progress_;
};

}  // namespace foresight::trainer::internal
