#include "metrics_file.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace foresight::apps::plot {

bool IsPlottedKey(const std::string& key) {
  auto ends_with = [&](const char* suffix) {
    const size_t n = std::strlen(suffix);
    return key.size() > n && key.compare(key.size() - n, n, suffix) == 0;
  };
  return key == "loss" || key == "cache_hits" || key == "cache_misses" || key == "bytes_read" ||
         ends_with("_acc") || ends_with("_auc") || ends_with("_logloss") || ends_with("_mrr");
}

StatusOr<MetricsRun> ReadMetricsFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return InvalidArgument(path + " is a directory, not a metrics file (train --metrics FILE writes one)");
  }
  std::ifstream in(path);
  if (!in) return NotFound("cannot read metrics file " + path + ": " + std::strerror(errno));
  MetricsRun run;
  run.path = path;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return InvalidArgument(where + "expected a JSON object (one metrics line), got '" +
                             (line.size() > 60 ? line.substr(0, 60) + "...'" : line + "'"));
    }
    if (j.contains("final")) continue;  // the run's summary, not an epoch
    const auto epoch = j.find("epoch");
    if (epoch == j.end() || !epoch->is_number_integer()) {
      return InvalidArgument(where + "expected an integer \"epoch\" in an epoch line");
    }
    const double x = epoch->get<double>();
    for (const auto& [key, value] : j.items()) {
      if (key == "epoch" || value.is_null()) continue;
      if (!value.is_number()) {
        if (!IsPlottedKey(key)) continue;  // "stages", "bottleneck", ...
        return InvalidArgument(where + "expected a number for \"" + key + "\", got " + value.dump());
      }
      run.columns[key].emplace_back(x, value.get<double>());
    }
    ++run.epochs;
  }
  if (in.bad()) return IoError("read metrics file " + path + ": " + std::strerror(errno));
  if (run.epochs == 0) {
    return InvalidArgument(path + ": no epoch lines (expected one JSON object per epoch, as train --metrics writes)");
  }
  return run;
}

}  // namespace foresight::apps::plot
