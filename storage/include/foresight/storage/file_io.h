// POSIX file I/O that every module writing or reading files by position
// shares (storage's npy and dataset writers, the graph partitioner): each
// failure becomes a Status naming the call, the path and the errno text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "foresight/core/status.h"

namespace foresight::storage {

// Owns a file descriptor; closes it (ignoring errors) on destruction. Use
// CloseFd to close it and see a deferred write error.
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
// close(2) of an owned fd, reporting errors (a deferred write error shows here).
Status CloseFd(ScopedFd* fd, const std::string& path);

}  // namespace foresight::storage
