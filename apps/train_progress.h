// The progress display of `foresight train`: one status line per epoch
// (batches done, rate, ETA, running loss, the pipeline's bottleneck stage)
// that ends in a summary line with the epoch's loss, accuracies, cache hits
// and bytes read, and where the time went.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "foresight/core/progress.h"
#include "foresight/trainer/trainer.h"

namespace foresight::apps {

class TrainProgress {
 public:
  explicit TrainProgress(int epochs) : epochs_(epochs) {}

  // Callbacks that feed this display; it must outlive the training call.
  trainer::TrainCallbacks Callbacks();

 private:
  void OnStages(const std::vector<std::pair<std::string, trainer::StageSeconds>>& stages);
  void OnBatch(int epoch, int64_t batch, int64_t num_batches, double loss);
  void OnEpoch(const trainer::EpochMetrics& m);
  void StartEpoch(int epoch, int64_t num_batches);

  const int epochs_;
  int epoch_ = 0;
  double loss_sum_ = 0;
  int64_t batches_ = 0;
  std::string bottleneck_;  // "read 63%" or ""

  std::unique_ptr<Progress> bar_;
};

}  // namespace foresight::apps
