#include "train_progress.h"

#include <cstdio>
#include <string>

namespace foresight::apps {

namespace {

std::string Fixed(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

// "sample 12% gather 30% forward 20% backward 30% optimizer 8%": each
// phase's share of the epoch's training time.
std::string PhaseShares(const trainer::EpochMetrics& m) {
  const double total = m.sample_seconds + m.gather_seconds + m.forward_seconds +
                       m.backward_seconds + m.optimizer_seconds;
  if (total <= 0) return "";
  std::string out;
  const std::pair<const char*, double> phases[] = {
      {"sample", m.sample_seconds},     {"gather", m.gather_seconds},
      {"forward", m.forward_seconds},   {"backward", m.backward_seconds},
      {"optimizer", m.optimizer_seconds}};
  for (const auto& p : phases) {
    out += (out.empty() ? "" : " ") + std::string(p.first) + " " +
           Fixed("%.0f%%", 100.0 * p.second / total);
  }
  return out;
}

}  // namespace

trainer::TrainCallbacks TrainProgress::Callbacks() {
  trainer::TrainCallbacks cb;
  cb.on_batch = [this](int epoch, int64_t batch, int64_t num_batches, double loss) {
    OnBatch(epoch, batch, num_batches, loss);
  };
  cb.on_epoch = [this](const trainer::EpochMetrics& m) { OnEpoch(m); };
  return cb;
}

void TrainProgress::StartEpoch(int epoch, int64_t num_batches) {
  epoch_ = epoch;
  loss_sum_ = 0;
  batches_ = 0;
  ProgressOptions opt;
  opt.unit = "batch";
  bar_ = std::make_unique<Progress>(
      "epoch " + std::to_string(epoch) + "/" + std::to_string(epochs_), num_batches, opt);
}

void TrainProgress::OnBatch(int epoch, int64_t batch, int64_t num_batches, double loss) {
  if (bar_ == nullptr || epoch != epoch_) StartEpoch(epoch, num_batches);
  loss_sum_ += loss;
  ++batches_;
  bar_->SetStatus("loss " + Fixed("%.4f", loss_sum_ / static_cast<double>(batches_)));
  bar_->Advance();
}

void TrainProgress::OnEpoch(const trainer::EpochMetrics& m) {
  if (bar_ == nullptr || m.epoch != epoch_) StartEpoch(m.epoch, 0);
  std::string summary = "loss " + Fixed("%.4f", m.loss) + " train " + Fixed("%.4f", m.train_acc) +
                        " val " + Fixed("%.4f", m.val_acc) + " test " + Fixed("%.4f", m.test_acc) +
                        " | " + FormatRate(m.seeds_per_second, "seeds");
  const std::string phases = PhaseShares(m);
  if (!phases.empty()) summary += " | " + phases;
  summary += " | eval " + Fixed("%.2fs", m.eval_seconds);
  bar_->Finish(summary);
  bar_.reset();
}

}  // namespace foresight::apps
