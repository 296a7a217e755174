#include "progress_reporter.h"

#include <cstdio>
#include <string>

namespace foresight::trainer::internal {

std::string DescribeBottleneck(const std::vector<std::pair<std::string, StageSeconds>>& stages) {
  double total = 0, busiest = -1;
  std::string name;
  for (const auto& [stage, s] : stages) {
    total += s.busy;
    if (s.busy > busiest) {
      busiest = s.busy;
      name = stage;
    }
  }
  if (name.empty() || total <= 0) return "";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s %.0f%%", name.c_str(), 100.0 * busiest / total);
  return buf;
}

void ProgressReporter::OnStages(const std::vector<std::pair<std::string, StageSeconds>>& stages) {
  bottleneck_ = DescribeBottleneck(stages);
}

void ProgressReporter::OnBatch(int epoch, int64_t batch, int64_t num_batches, double loss) {
  if (epoch != current_epoch_ || progress_ == nullptr) {
    current_epoch_ = epoch;
    ProgressOptions options;
    options.unit = "batch";
    progress_ = std::make_unique<Progress>(
        "epoch " + std::to_string(epoch) + "/" + std::to_string(total_epochs_), num_batches, options);
  }
  char status[128];
  std::snprintf(status, sizeof(status), "loss %.4f%s%s", loss, bottleneck_.empty() ? "" : " | bottleneck ",
                bottleneck_.c_str());
  progress_->SetStatus(status);
  progress_->Advance(1);
}

void ProgressReporter::OnEpoch(const EpochMetrics& m) {
  char summary[320];
  const std::string bottleneck = DescribeBottleneck(m.stages);
  std::snprintf(summary, sizeof(summary),
                "loss %.4f  train %.4f  val %.4f  test %.4f  %.0f seeds/s  eval %.2fs%s%s", m.loss, m.train_acc,
                m.val_acc, m.test_acc, m.seeds_per_second, m.eval_seconds,
                bottleneck.empty() ? "" : "  bottleneck ", bottleneck.c_str());
  if (progress_ == nullptr) {  // an epoch without batches
    progress_ = std::make_unique<Progress>("epoch " + std::to_string(m.epoch) + "/" + std::to_string(total_epochs_), 0);
  }
  progress_->Finish(summary);
  progress_.reset();
  bottleneck_.clear();
}

}  // namespace foresight::trainer::internal
