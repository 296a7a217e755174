#include "progress_reporter.h"

#include <cstdio>
#include <string>

namespace foresight::trainer::internal {

void ProgressReporter::OnBatch(int epoch, int64_t batch, int64_t num_batches, double loss) {
  if (epoch != current_epoch_ || progress_ == nullptr) {
    current_epoch_ = epoch;
    ProgressOptions options;
    options.unit = "batch";
    progress_ = std::make_unique<Progress>(
        "epoch " + std::to_string(epoch) + "/" + std::to_string(total_epochs_), num_batches, options);
  }
  char status[64];
  std::snprintf(status, sizeof(status), "loss %.4f", loss);
  progress_->SetStatus(status);
  progress_->Advance(1);
}

void ProgressReporter::OnEpoch(const EpochMetrics& m) {
  char summary[256];
  std::snprintf(summary, sizeof(summary),
                "loss %.4f  train %.4f  val %.4f  test %.4f  %.0f seeds/s  eval %.2fs", m.loss, m.train_acc,
                m.val_acc, m.test_acc, m.seeds_per_second, m.eval_seconds);
  if (progress_ == nullptr) {  // an epoch without batches
    progress_ = std::make_unique<Progress>("epoch " + std::to_string(m.epoch) + "/" + std::to_string(total_epochs_), 0);
  }
  progress_->Finish(summary);
  progress_.reset();
}

}  // namespace foresight::trainer::internal
