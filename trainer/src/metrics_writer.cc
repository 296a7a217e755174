#include "metrics_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "foresight/core/logging.h"

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
  j["epoch_cpu_seconds"] = m.epoch_cpu_seconds;
  j["epoch_minor_faults"] = m.epoch_minor_faults;
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
  j["rows_read"] = m.rows_read;
  j["reads_issued"] = m.reads_issued;
  j["rows_per_read"] =
      m.reads_issued > 0 ? static_cast<double>(m.rows_read) / static_cast<double>(m.reads_issued) : 0.0;
  nlohmann::json stages = nlohmann::json::object();
  for (const auto& [name, s] : m.stages) stages[name] = {{"busy", s.busy}, {"wait", s.wait}};
  j["stages"] = stages;
  j["bottleneck"] = m.bottleneck;
  if (m.allreduce_steps > 0) {  // several ranks (rank 0's figures)
    j["allreduce_seconds"] = m.allreduce_seconds;
    j["allreduce_bytes"] = m.allreduce_bytes;
    j["allreduce_steps"] = m.allreduce_steps;
  }
  return j;
}

std::string FinalLine(const TrainSummary& s) {
  nlohmann::json j;
  j["final"] = true;
  j["best_epoch"] = s.best_epoch;
  j["val_acc"] = s.best_val_acc;
  j["test_acc"] = s.test_acc;
  j["epochs"] = s.epochs_completed;
  j["stopped_early"] = s.stopped_early;
  return j.dump();
}

namespace {

// The number of leading lines of `text` that are the epoch lines 1, 2, ...
// (at most `epochs` of them), and the bytes they span.
std::pair<int, size_t> LeadingEpochLines(const std::string& text, int epochs) {
  int kept = 0;
  size_t end = 0, at = 0;
  while (kept < epochs) {
    const size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;  // a partial line is never kept
    const nlohmann::json j = nlohmann::json::parse(text.begin() + static_cast<std::ptrdiff_t>(at),
                                                   text.begin() + static_cast<std::ptrdiff_t>(nl), nullptr,
                                                   /*allow_exceptions=*/false);
    if (!j.is_object() || j.contains("final") || !j.contains("epoch") || !j["epoch"].is_number_integer() ||
        j["epoch"].get<int64_t>() != kept + 1) {
      break;
    }
    at = nl + 1;
    // A line within its epoch ("epoch_end": false, DLRM's --eval-every) is
    // kept only with the epoch's last line.
    if (j.contains("epoch_end") && j["epoch_end"].is_boolean() && !j["epoch_end"].get<bool>()) continue;
    ++kept;
    end = at;
  }
  return {kept, end};
}

}  // namespace

StatusOr<std::unique_ptr<MetricsWriter>> MetricsWriter::Create(const std::string& path, bool durable) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("open metrics file " + path, errno);
  return std::unique_ptr<MetricsWriter>(new MetricsWriter(path, fd, durable));
}

StatusOr<std::unique_ptr<MetricsWriter>> MetricsWriter::Resume(const std::string& path, int epochs, bool durable) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("open metrics file " + path, errno);
  std::unique_ptr<MetricsWriter> w(new MetricsWriter(path, fd, durable));
  std::string text;
  char buf[1 << 16];
  for (uint64_t off = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof(buf), static_cast<off_t>(off));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("read metrics file " + path, errno);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    off += static_cast<uint64_t>(n);
  }
  const auto [kept, end] = LeadingEpochLines(text, epochs);
  w->kept_epochs_ = kept;
  w->end_ = end;
  w->dropped_ = text.substr(end);
  if (kept < epochs) {
    FS_LOG(WARNING) << "metrics file " << path << " holds the lines of "
                    << (kept == 0 ? std::string("no epoch") : "epochs 1-" + std::to_string(kept))
                    << " of the checkpoint's " << epochs << " (a new or edited file): the lines of epochs "
                    << kept + 1 << "-" << epochs << " will be missing from it";
  }
  return w;
}

MetricsWriter::~MetricsWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status MetricsWriter::Append(const std::string& line) {
  if (!dropped_.empty()) {
    if (::ftruncate(fd_, static_cast<off_t>(end_)) != 0) {
      return ErrnoError("truncate metrics file " + path_ + " to " + std::to_string(end_) + " bytes", errno);
    }
    FS_LOG(INFO) << "metrics file " << path_ << ": removed the " << dropped_.size()
                 << " bytes after the line of epoch " << kept_epochs_
                 << ", the checkpoint's last (lines of lost epochs, or the final line of a run now extended)";
    dropped_.clear();
  }
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = ::pwrite(fd_, line.data() + done, line.size() - done, static_cast<off_t>(end_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return ErrnoError("write metrics file " + path_, n < 0 ? errno : ENOSPC);
    done += static_cast<size_t>(n);
  }
  end_ += line.size();
  if (durable_ && ::fsync(fd_) != 0) return ErrnoError("fsync metrics file " + path_, errno);
  return Status::OK();
}

Status MetricsWriter::WriteEpoch(const EpochMetrics& m) {
  FS_RETURN_IF_ERROR(Append(EpochMetricsToJson(m).dump() + "\n"));
  ++kept_epochs_;
  return Status::OK();
}

Status MetricsWriter::WriteLine(const nlohmann::json& j, bool ends_epoch) {
  FS_RETURN_IF_ERROR(Append(j.dump() + "\n"));
  if (ends_epoch) ++kept_epochs_;
  return Status::OK();
}

Status MetricsWriter::WriteFinal(const TrainSummary& s) { return WriteFinalText(FinalLine(s)); }

Status MetricsWriter::WriteFinalText(const std::string& text) {
  const std::string line = text + "\n";
  if (dropped_ == line) {  // a finished run resumed: the file is already complete
    dropped_.clear();
    return Status::OK();
  }
  return Append(line);
}

}  // namespace foresight::trainer::internal
