// The progress display of `foresight train`: one status line per epoch
// (batches done, rate, ETA, running loss) that ends in a summary line with
// the epoch's loss, accuracies and where the time went.
#pragma once

#include <memory>

#include "foresight/core/progress.h"
#include "foresight/trainer/trainer.h"

namespace foresight::apps {

class TrainProgress {
 public:
  explicit TrainProgress(int epochs) : epochs_(epochs) {}

  // Callbacks that feed this display; it must outlive the training call.
  trainer::TrainCallbacks Callbacks();

 private:
  void OnBatch(int epoch, int64_t batch, int64_t num_batches, double loss);
  void OnEpoch(const trainer::EpochMetrics& m);
  void StartEpoch(int epoch, int64_t num_batches);

  const int epochs_;
  int epoch_ = 0;
  double loss_sum_ = 0;
  int64_t batches_ = 0;
  std::unique_ptr<Progress> bar_;
};

}  // namespace foresight::apps
