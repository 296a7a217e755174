// POSIX file helpers for storage: every failure becomes a Status naming the
// call, the path and errno text. Private to the storage module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "foresight/core/status.h"

namespace foresight::storage::internal {

// Owns a file descriptor; closes it (ignoring errors) on destruction.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd();
  ScopedFd(ScopedFd&& o) noexcept : fd_(o.release()) {}
  ScopedFd& operator=(ScopedFd&& o) noexcept;
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }
  int release() { int f = fd_; fd_ = -1; return f; }

 private:
  int fd_ = -1;
};

// open(2) with O_CLOEXEC added; NotFound for ENOENT.
StatusOr<ScopedFd> OpenFile(const std::string& path, int flags, int mode = 0644);
// Reads exactly `n` bytes at `offset` (retrying short reads and EINTR);
// DataLoss "truncated" on EOF before n bytes.
Status PreadFull(int fd, void* buf, size_t n, uint64_t offset, const std::string& path);
// Writes exactly `n` bytes at `offset`; ENOSPC becomes ResourceExhausted.
Status PwriteFull(int fd, const void* buf, size_t n, uint64_t offset, const std::string& path);
Status FsyncFd(int fd, const std::string& path);
// close(2) of an owned fd, reporting errors (a deferred write error shows here).
Status CloseFd(ScopedFd* fd, const std::string& path);
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
// A short random hex string (for unique temporary names).
std::string RandomSuffix();

}  // namespace foresight::storage::internal
