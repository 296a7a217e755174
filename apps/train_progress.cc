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

// "read 63%": the stage with the most busy time and its share of all the
// stages' busy time (the pipeline's bottleneck); "" without stages.
std::string Bottleneck(const std::vector<std::pair<std::string, trainer::StageSeconds>>& stages) {
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
  return name + " " + Fixed("%.0f%%", 100.0 * busiest / total);
}

// "cache 83% hits, 12.3 MiB read" for an epoch that read rows; "" else.
std::string CacheSummary(const trainer::EpochMetrics& m) {
  if (m.rows_requested == 0) return "";
  const double requested = static_cast<double>(m.cache_hits + m.cache_misses);
  std::string out = "cache " + Fixed("%.0f%%", requested > 0 ? 100.0 * m.cache_hits / requested : 0.0) + " hits, ";
  const double mib = static_cast<double>(m.bytes_read) / (1 << 20);
  return out + Fixed(mib >= 1024 ? "%.2f" : "%.1f", mib >= 1024 ? mib / 1024 : mib) +
         (mib >= 1024 ? " GiB read" : " MiB read");
}

}  // namespace

trainer::TrainCallbacks TrainProgress::Callbacks() {
  trainer::TrainCallbacks cb;
  cb.on_batch = [this](int epoch, int64_t batch, int64_t num_batches, double loss) {
    OnBatch(epoch, batch, num_batches, loss);
  };
  cb.on_epoch = [this](const trainer::EpochMetrics& m) { OnEpoch(m); };
  cb.on_stages = [this](const std::vector<std::pair<std::string, trainer::StageSeconds>>& stages) {
    OnStages(stages);
  };
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

void TrainProgress::OnStages(const std::vector<std::pair<std::string, trainer::StageSeconds>>& stages) {
  bottleneck_ = Bottleneck(stages);
}

void TrainProgress::OnBatch(int epoch, int64_t batch, int64_t num_batches, double loss) {
  if (bar_ == nullptr || epoch != epoch_) StartEpoch(epoch, num_batches);
  loss_sum_ += loss;
  ++batches_;
  bar_->SetStatus("loss " + Fixed("%.4f", loss_sum_ / static_cast<double>(batches_)) +
                  (bottleneck_.empty() ? "" : " | bottleneck " + bottleneck_));
  bar_->Advance();
}

void TrainProgress::OnEpoch(const trainer::EpochMetrics& m) {
  if (bar_ == nullptr || m.epoch != epoch_) StartEpoch(m.epoch, 0);
  std::string summary = "loss " + Fixed("%.4f", m.loss) + " train " + Fixed("%.4f", m.train_acc) +
                        " val " + Fixed("%.4f", m.val_acc) + " test " + Fixed("%.4f", m.test_acc) +
                        " | " + FormatRate(m.seeds_per_second, "seeds");
  const std::string cache = CacheSummary(m);
  if (!cache.empty()) summary += " | " + cache;
  const std::string bottleneck = Bottleneck(m.stages);
  if (!bottleneck.empty()) {
    summary += " | bottleneck " + bottleneck;
  } else {
    const std::string phases = PhaseShares(m);
    if (!phases.empty()) summary += " | " + phases;
  }
  summary += " | eval " + Fixed("%.2fs", m.eval_seconds);
  bar_->Finish(summary);
  bar_.reset();
  bottleneck_.clear();
}

}  // namespace foresight::apps
