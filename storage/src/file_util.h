// POSIX file helpers for storage: every failure becomes a Status naming the
// call, the path and errno text. Private to the storage module, except the
// positional I/O of foresight/storage/file_io.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "foresight/core/status.h"
#include "foresight/storage/file_io.h"

namespace foresight::storage::internal {

// The positional I/O shared with other modules (foresight/storage/file_io.h).
using storage::CloseFd;
using storage::OpenFile;
using storage::PreadFull;
using storage::PwriteFull;
using storage::ScopedFd;

Status FsyncFd(int fd, const std::string& path);
StatusOr<uint64_t> FileSizeOf(int fd, const std::string& path);
// Opens directory `dir` and fsyncs it (makes renames inside it durable).
Status FsyncDir(const std::string& dir);
Status RenamePath(const std::string& from, const std::string& to);
// Removes a file or a directory tree; a missing path is OK.
Status RemoveAll(const std::string& path);
// The parent directory of `path` ("." when it has none).
std::string ParentDir(const std::string& path);
// Lexically normalised path without trailing '/'.
std::string CleanPath(const std::string& path);
// CleanPath(dir) when it names a directory; else the error a dataset reader
// reports ("dataset dir D: No such file..." or "dataset D is not a directory").
StatusOr<std::string> ExistingDatasetDir(const std::string& dir);
// A short random hex string (for unique temporary names).
std::string RandomSuffix();

}  // namespace foresight::storage::internal
