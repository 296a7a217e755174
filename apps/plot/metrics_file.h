// Reads a training metrics file (JSON lines, trainer/src/metrics_writer.h:
// one object per epoch, then a {"final": true} summary) into per-key
// columns for `foresight plot`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::apps::plot {

struct MetricsRun {
  std::string path;
  // Every numeric key of the epoch lines ("loss", "val_acc", "val_auc",
  // "cache_hits", ...): the (epoch, value) points of the lines that carry
  // it, in file order. A null value (a NaN or infinite loss, as the JSON
  // writer spells it) is left out, so the line shows a gap's end points.
  std::map<std::string, std::vector<std::pair<double, double>>> columns;
  int epochs = 0;  // epoch lines read
};

// The keys `foresight plot` draws: loss, *_acc, *_auc, *_logloss, *_mrr,
// cache_hits, cache_misses, bytes_read.
bool IsPlottedKey(const std::string& key);

// Errors, each naming the file (and line): the file cannot be read (missing,
// a directory), holds no epoch line, or a line is not a JSON object, lacks
// an integer "epoch", or has a plotted key whose value is neither a number
// nor null (other keys that are not numbers, such as "stages" or
// "bottleneck", are skipped). Blank lines are skipped.
StatusOr<MetricsRun> ReadMetricsFile(const std::string& path);

}  // namespace foresight::apps::plot
