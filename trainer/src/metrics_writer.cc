#include "metrics_writer.h"

#include <cerrno>

namespace foresight::trainer::internal {

nlohmann::json EpochMetricsToJson(const EpochMetrics& m) {
  nlohmann::json j;
  j["epoch"] = m.epoch;
  j["loss"] = m.loss;
  j["train_acc"] = m.train_acc;
  j["val_acc"] = m.val_acc;
  j["test_acc"] = m.test_acc;
  j["seeds"] = m.seeds;
  j["sampled_edges"] = m.sampled_edges;
  j["epoch_seconds"] = m.epoch_seconds;
  j["seeds_per_second"] = m.seeds_per_second;
  j["sampled_edges_per_second"] = m.sampled_edges_per_second;
  j["sample_seconds"] = m.sample_seconds;
  j["gather_seconds"] = m.gather_seconds;
  j["forward_seconds"] = m.forward_seconds;
  j["backward_seconds"] = m.backward_seconds;
  j["optimizer_seconds"] = m.optimizer_seconds;
  j["eval_seconds"] = m.eval_seconds;
  j["cache_hits"] = m.cache_hits;
  j["cache_misses"] = m.cache_misses;
  j["bytes_read"] = m.bytes_read;
  j["bytes_written"] = m.bytes_written;
  j["rows_requested"] = m.rows_requested;
  nlohmann::json stages = nlohmann::json::object();
  for (const auto& [name, s] : m.stages) stages[name] = {{"busy", s.busy}, {"wait", s.wait}};
  j["stages"] = stages;
  j["bottleneck"] = m.bottleneck;
  return j;
}

StatusOr<std::unique_ptr<MetricsWriter>> MetricsWriter::Open(const std::string& path, bool append) {
  FILE* f = std::fopen(path.c_str(), append ? "ab" : "wb");
  if (f == nullptr) return ErrnoError("open metrics file " + path, errno);
  return std::unique_ptr<MetricsWriter>(new MetricsWriter(path, f));
}

MetricsWriter::~MetricsWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

Status MetricsWriter::WriteLine(const nlohmann::json& j) {
  const std::string line = j.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    return ErrnoError("write metrics file " + path_, errno);
  }
  return Status::OK();
}

Status MetricsWriter::WriteEpoch(const EpochMetrics& m) { return WriteLine(EpochMetricsToJson(m)); }

Status MetricsWriter::WriteFinal(const TrainSummary& s) {
  nlohmann::json j;
  j["final"] = true;
  j["best_epoch"] = s.best_epoch;
  j["val_acc"] = s.best_val_acc;
  j["test_acc"] = s.test_acc;
  j["epochs"] = s.epochs_completed;
  j["stopped_early"] = s.stopped_early;
  return WriteLine(j);
}

}  // namespace foresight::trainer::internal
