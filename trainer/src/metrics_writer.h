// The JSON-lines metrics file: one object per epoch, then a final summary
// line. Each line is flushed as written so a crash loses at most the epoch
// in progress. Private to the trainer.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "foresight/core/status.h"
#include "foresight/trainer/trainer.h"

namespace foresight::trainer::internal {

// The epoch line's object (keys: epoch, loss, train_acc, val_acc, test_acc,
// epoch_seconds, seeds_per_second, sampled_edges_per_second, seeds,
// sampled_edges, <phase>_seconds for sample, gather, forward, backward,
// optimizer, eval; cache_hits, cache_misses, bytes_read, bytes_written,
// rows_requested; "stages": {"<stage>": {"busy": s, "wait": s}, ...} for
// sample, plan, read, assemble, compute, write_back (empty in full-graph
// mode) and "bottleneck", the busiest stage).
nlohmann::json EpochMetricsToJson(const EpochMetrics& m);

class MetricsWriter {
 public:
  // Truncates `path`, or appends to it when `append` (a resumed run).
  static StatusOr<std::unique_ptr<MetricsWriter>> Open(const std::string& path, bool append);
  ~MetricsWriter();
  MetricsWriter(const MetricsWriter&) = delete;
  MetricsWriter& operator=(const MetricsWriter&) = delete;

  Status WriteEpoch(const EpochMetrics& m);
  // {"final": true, "best_epoch", "val_acc", "test_acc", "epochs",
  // "stopped_early"}.
  Status WriteFinal(const TrainSummary& s);

 private:
  MetricsWriter(std::string path, FILE* f) : path_(std::move(path)), file_(f) {}
  Status WriteLine(const nlohmann::json& j);
  std::string path_;
  FILE* file_;
};

}  // namespace foresight::trainer::internal
