// Small filesystem helpers for checkpoints and exports: every failure becomes
// a Status naming the call and the path. Private to the trainer.
#pragma once

#include <string>

#include "foresight/core/status.h"

namespace foresight::trainer::internal {

// Creates `dir` and missing parents; OK when it exists as a directory.
Status MakeDirs(const std::string& dir);
// fsync(2) of a directory: its entries are durable.
Status FsyncDir(const std::string& dir);
// rename(2), then fsync of the destination's directory (durable rename).
Status DurableRename(const std::string& from, const std::string& to);
// Removes a file or directory tree; a missing path is OK.
Status RemoveAll(const std::string& path);
bool PathExists(const std::string& path);
// Writes `contents` to `path` via "<path>.tmp" + fsync + rename.
Status WriteFileAtomic(const std::string& path, const std::string& contents);
// Whole file as a string (NotFound when absent).
StatusOr<std::string> ReadWholeFile(const std::string& path);

}  // namespace foresight::trainer::internal
