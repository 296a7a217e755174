// The disk space an edge-list preprocessing run needs, checked before it
// starts: a billion-edge run spills ~16 GB of sorted runs and writes a
// dataset of several GB, and running out of space an hour in is worse than
// a refusal naming the folder, the bytes needed and the bytes free.
// Private to datasets/.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::datasets::internal {

// Edges in an edge file, estimated without reading it all: exact for
// binary pairs (`pair_bytes` 8 or 16), else from the lines per byte of the
// first 4 MiB of text (decompressed from gzip as it lies on disk: lines per
// compressed byte), times the file's size. Unimplemented for xz (its
// compressed size is not measured here); IoError naming the file.
StatusOr<int64_t> EstimateEdgeCount(const std::string& path, int pair_bytes);

// What one folder must hold at once.
struct DiskNeed {
  std::string dir;
  int64_t bytes = 0;
  std::string what;  // "spilled edge runs", "the dataset"
};

// Free bytes for an unprivileged writer on the filesystem of `dir`
// (statvfs f_bavail), or IoError naming the folder.
StatusOr<int64_t> FreeDiskBytes(const std::string& dir);

// Sums the needs per filesystem (folders on one device share its space)
// and returns ResourceExhausted naming each folder, what it holds, the
// bytes needed and the bytes free, when one does not fit. `free_bytes`
// replaces FreeDiskBytes in tests; `same_device` decides which folders
// share a filesystem (default: stat's st_dev).
Status CheckDiskSpace(const std::vector<DiskNeed>& needs,
                      const std::function<StatusOr<int64_t>(const std::string&)>& free_bytes = FreeDiskBytes);

// "3.2 GB" (decimal, as df -H prints).
std::string FormatDiskBytes(int64_t bytes);

}  // namespace foresight::datasets::internal
