// The up-front disk check of an edge-list preprocessing run (disk_space.h):
// estimates the edges, sizes the spilled runs and the dataset, logs them
// and refuses a run that cannot fit.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "disk_space.h"
#include "foresight/core/logging.h"
#include "preprocess_internal.h"

namespace foresight::datasets::internal {

namespace {

int64_t FileBytes(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

// The nearest folder above `path` that exists (the dataset writer makes
// the missing ones): the filesystem the output will land on.
std::string ExistingParentDir(const std::string& path) {
  std::string dir = path;
  while (true) {
    const size_t slash = dir.find_last_of('/');
    if (slash == std::string::npos) return ".";
    dir = slash == 0 ? "/" : dir.substr(0, slash);
    struct stat st;
    if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return dir;
    if (dir == "/") return dir;
  }
}

}  // namespace

StatusOr<int64_t> CheckEdgeListDiskSpace(const PreprocessOptions& o, int64_t spill_edge_bytes) {
  // A missing or unreadable edge file is the reader's to report, with its
  // usual message.
  if (o.edges.empty() || ::access(o.edges.c_str(), R_OK) != 0) return int64_t{0};
  const int pair_bytes = o.edge_dtype == EdgeDType::kInt32 ? 8 : o.edge_dtype == EdgeDType::kInt64 ? 16 : 0;
  StatusOr<int64_t> estimated = EstimateEdgeCount(o.edges, pair_bytes);
  if (estimated.status().code() == StatusCode::kUnimplemented) {
    LogLine(LogLevel::kWarning, "preprocess: disk space not checked up front: " + estimated.status().message());
    return int64_t{0};
  }
  FS_RETURN_IF_ERROR(estimated.status());
  // Directed edges after symmetrising (duplicates and self loops are
  // dropped only while merging, so the runs hold them all).
  const int64_t edges = *estimated * (o.undirected ? 2 : 1);
  // Every edge spills once when the runs outgrow the budget's buffer.
  const int64_t buffered = static_cast<int64_t>(o.memory_budget_bytes) / (2 * spill_edge_bytes);
  const int64_t spilled = edges > buffered ? edges * spill_edge_bytes : 0;
  std::string temp = o.temp_dir;
  if (temp.empty()) {
    const char* t = std::getenv("TMPDIR");
    temp = t != nullptr && *t != '\0' ? t : "/tmp";
  }
  // The dataset: i32 indices (i64 past 2^31 nodes, not known yet), the
  // features and labels as given, the split ids and indptr (8 bytes per
  // node; nodes <= edges + 1 bounded by the input's size).
  const int64_t dataset = edges * 4 + FileBytes(o.features) + FileBytes(o.labels) + edges / 2 * 8;
  std::vector<DiskNeed> needs = {{ExistingParentDir(o.output), dataset, "the dataset"}};
  if (spilled > 0) needs.push_back({temp, spilled, "spilled edge runs"});
  LogLine(LogLevel::kInfo, "preprocess: about " + std::to_string(*estimated) + " edges in " + o.edges +
                               " (estimated from its first 4 MiB); disk needed: about " + FormatDiskBytes(dataset) +
                               " for the dataset in " + ExistingParentDir(o.output) +
                               (spilled > 0 ? " and " + FormatDiskBytes(spilled) + " of spilled runs in " + temp
                                            : std::string(" (no spill: the edges fit the budget)")));
  FS_RETURN_IF_ERROR(CheckDiskSpace(needs));
  return *estimated;
}

}  // namespace foresight::datasets::internal
