// The JSON-lines metrics file: one object per epoch, then a final summary
// line, kept equal to an uninterrupted run's across kills and resumes.
// Private to the trainer.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "foresight/core/status.h"
#include "foresight/trainer/trainer.h"

namespace foresight::trainer::internal {

// The epoch line's object (keys: epoch, loss, train_acc, val_acc, test_acc,
// epoch_seconds, epoch_cpu_seconds, epoch_minor_faults, seeds_per_second, sampled_edges_per_second, seeds,
// sampled_edges, <phase>_seconds for sample, gather, forward, backward,
// optimizer, eval; cache_hits, cache_misses, bytes_read, bytes_written,
// rows_requested, rows_read, reads_issued, rows_per_read (rows_read /
// reads_issued, 0 without reads); "stages": {"<stage>": {"busy": s, "wait": s}, ...} for
// sample, plan, read, assemble, compute, write_back (empty in full-graph
// mode) and "bottleneck", the busiest stage).
nlohmann::json EpochMetricsToJson(const EpochMetrics& m);

// The final line's text (no newline): {"final": true, "best_epoch",
// "val_acc", "test_acc", "epochs", "stopped_early"}.
std::string FinalLine(const TrainSummary& s);

// Writes one line per epoch, then the final line. Every line goes out in one
// write(2) as it is written, so a crash loses at most the line in progress.
//
// A resumed run must leave the file exactly as an uninterrupted run would
// (timings aside), however often it was killed and resumed. The invariant
// that makes that hold by construction: when a checkpoint holds k epochs,
// the file's first k lines are the lines of epochs 1..k of the same run.
// It holds because epoch k's line is written, and made durable when
// `durable`, before epoch k's checkpoint is committed (the trainer's order),
// and because Resume drops whatever follows line k (lines of epochs the
// checkpoint lost, a final line, a partial line) before the first new line
// is written. Keeping the lines in the checkpoint instead would put timings
// in it and make checkpoints of equal runs differ.
class MetricsWriter {
 public:
  // A new run: truncates (or creates) `path`.
  static StatusOr<std::unique_ptr<MetricsWriter>> Create(const std::string& path, bool durable);
  // A run resumed from a checkpoint holding `epochs` epochs: keeps the
  // file's lines of epochs 1..epochs and drops the rest when the next line
  // is written (a finished run's final line, when identical, is kept and
  // the file left untouched). When the file holds fewer of those lines (it
  // is new, or was edited), logs which are missing and appends after them.
  static StatusOr<std::unique_ptr<MetricsWriter>> Resume(const std::string& path, int epochs, bool durable);
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter&) = delete;
  MetricsWriter& operator=(const MetricsWriter&) = delete;

  // `durable`: each line is fsync-ed before the call returns.
  Status WriteEpoch(const EpochMetrics& m);
  Status WriteFinal(const TrainSummary& s);
  // Models with their own line layout (DLRM): one JSON line; `ends_epoch`
  // says it is the last line of its epoch (the unit a resume keeps; the
  // lines before it within the epoch carry "epoch_end": false).
  Status WriteLine(const nlohmann::json& j, bool ends_epoch);
  // The final line's text (no newline), kept as is when a finished run is
  // resumed and the file already ends with it.
  Status WriteFinalText(const std::string& text);

 private:
  MetricsWriter(std::string path, int fd, bool durable) : path_(std::move(path)), fd_(fd), durable_(durable) {}
  Status Append(const std::string& line);
  std::string path_;
  int fd_;
  bool durable_;
  uint64_t end_ = 0;       // bytes of the file that are kept
  std::string dropped_;    // what follows end_ on disk, until the next write removes it
  int kept_epochs_ = 0;
};

}  // namespace foresight::trainer::internal
