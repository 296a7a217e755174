#include "progress_reporter.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "foresight/core/logging.h"

namespace foresight::trainer::internal {

namespace {

std::string Fixed(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

// "sample 12% gather 30% forward 20% backward 30% optimizer 8%": each
// phase's share of the epoch's training time; "" when none was timed.
std::string PhaseShares(const EpochMetrics& m) {
  const double total =
      m.sample_seconds + m.gather_seconds + m.forward_seconds + m.backward_seconds + m.optimizer_seconds;
  if (total <= 0) return "";
  const std::pair<const char*, double> phases[] = {{"sample", m.sample_seconds},
                                                   {"gather", m.gather_seconds},
                                                   {"forward", m.forward_seconds},
                                                   {"backward", m.backward_seconds},
                                                   {"optimizer", m.optimizer_seconds}};
  std::string out;
  for (const auto& [name, seconds] : phases) {
    out += (out.empty() ? "" : " ") + std::string(name) + " " + Fixed("%.0f%%", 100.0 * seconds / total);
  }
  return out;
}

// "cache 83% hits, 12.3 MiB read" for an epoch that read rows through a
// cache; "12.3 MiB read" without a cache (there are no hits to count); ""
// for an epoch that read no rows.
std::string CacheSummary(const EpochMetrics& m) {
  if (m.rows_requested == 0) return "";
  const double mib = static_cast<double>(m.bytes_read) / (1 << 20);
  const std::string read = mib >= 1024 ? Fixed("%.2f GiB read", mib / 1024) : Fixed("%.1f MiB read", mib);
  if (m.cache_bytes == 0) return read;
  const double requested = static_cast<double>(m.cache_hits + m.cache_misses);
  const double hits = requested > 0 ? 100.0 * static_cast<double>(m.cache_hits) / requested : 0.0;
  return "cache " + Fixed("%.0f%%", hits) + " hits, " + read;
}

// "4.76s" below 100 s (as precise as the metrics file's seconds read), else
// "12m34s".
std::string Seconds(double s) { return s < 100 ? Fixed("%.2fs", s) : FormatDuration(s); }

}  // namespace

std::string Bottleneck(const std::vector<std::pair<std::string, StageSeconds>>& stages) {
  std::string best;
  double busiest = -1;
  for (const auto& [name, s] : stages) {
    if (s.busy > busiest) {
      busiest = s.busy;
      best = name;
    }
  }
  return best;
}

std::string DescribeBottleneck(const std::vector<std::pair<std::string, StageSeconds>>& stages) {
  double total = 0, busiest = 0;
  for (const auto& [name, s] : stages) {
    total += s.busy;
    busiest = std::max(busiest, s.busy);
  }
  const std::string name = Bottleneck(stages);
  if (name.empty() || total <= 0) return "";
  return name + " " + Fixed("%.0f%%", 100.0 * busiest / total);
}

std::string EpochSummary(const EpochMetrics& m) {
  std::string s = "loss " + Fixed("%.4f", m.loss) + " train " + Fixed("%.4f", m.train_acc) + " val " +
                  Fixed("%.4f", m.val_acc) + " test " + Fixed("%.4f", m.test_acc) + " | " +
                  FormatRate(m.seeds_per_second, "seeds");
  const std::string cache = CacheSummary(m);
  if (!cache.empty()) s += " | " + cache;
  const std::string bottleneck = DescribeBottleneck(m.stages);
  if (!bottleneck.empty()) {
    s += " | bottleneck " + bottleneck;
  } else {
    const std::string phases = PhaseShares(m);
    if (!phases.empty()) s += " | " + phases;
  }
  return s + " | eval " + Seconds(m.eval_seconds);
}

std::string EpochLine(const std::string& label, int64_t batches, const EpochMetrics& m) {
  const double rate = m.epoch_seconds > 0 ? static_cast<double>(batches) / m.epoch_seconds : 0.0;
  return label + ": " + std::to_string(batches) + " batch in " + Seconds(m.epoch_seconds) + " (" +
         FormatRate(rate, "batch") + ") | " + EpochSummary(m);
}

void ProgressReporter::OnResume(int epochs_done, const std::string& checkpoint_dir) {
  if (!ProgressEnabled() || options_.quiet) return;
  const std::string line = "resuming from epoch " + std::to_string(epochs_done + 1) + " of " +
                           std::to_string(total_epochs_) + ": " + std::to_string(epochs_done) +
                           (epochs_done == 1 ? " epoch" : " epochs") + " done in " + checkpoint_dir;
  if (options_.sink != nullptr && options_.sink != stderr) {
    std::fprintf(options_.sink, "%s\n", line.c_str());
    std::fflush(options_.sink);
  } else {
    LogLine(LogLevel::kInfo, line);
  }
}

std::string ProgressReporter::Label(int epoch) const {
  return "epoch " + std::to_string(epoch) + "/" + std::to_string(total_epochs_);
}

void ProgressReporter::StartEpoch(int epoch, int64_t num_batches) {
  epoch_ = epoch;
  loss_sum_ = 0;
  batches_ = 0;
  ProgressOptions options = options_;
  options.unit = "batch";
  bar_ = std::make_unique<Progress>(Label(epoch), num_batches, options);
}

void ProgressReporter::OnStages(const std::vector<std::pair<std::string, StageSeconds>>& stages) {
  bottleneck_ = DescribeBottleneck(stages);
}

void ProgressReporter::OnBatch(int epoch, int64_t, int64_t num_batches, double loss) {
  if (bar_ == nullptr || epoch != epoch_) StartEpoch(epoch, num_batches);
  loss_sum_ += loss;
  ++batches_;
  bar_->SetStatus("loss " + Fixed("%.4f", loss_sum_ / static_cast<double>(batches_)) +
                  (bottleneck_.empty() ? "" : " | bottleneck " + bottleneck_));
  bar_->Advance();
}

void ProgressReporter::OnEpoch(const EpochMetrics& m) {
  if (bar_ == nullptr || m.epoch != epoch_) StartEpoch(m.epoch, 0);  // an epoch without batches
  // The bar's clock starts at the first batch and stops after evaluation
  // and the checkpoint; the metrics' epoch_seconds is the training time.
  bar_->FinishLine(EpochLine(Label(m.epoch), batches_, m));
  bar_.reset();
  bottleneck_.clear();
}

}  // namespace foresight::trainer::internal
