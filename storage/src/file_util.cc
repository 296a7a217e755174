#include "file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <random>

namespace foresight::storage {

ScopedFd::~ScopedFd() {
  if (fd_ >= 0) ::close(fd_);
}

ScopedFd& ScopedFd::operator=(ScopedFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

StatusOr<ScopedFd> OpenFile(const std::string& path, int flags, int mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoError("open " + path, errno);
  return ScopedFd(fd);
}

Status PreadFull(int fd, void* buf, size_t n, uint64_t offset, const std::string& path) {
  char* p = static_cast<char*>(buf);
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, p + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("pread " + path + " at offset " + std::to_string(offset + done), errno);
    }
    if (r == 0) {
      return DataLoss(path + ": truncated: expected " + std::to_string(n) + " bytes at offset " +
                      std::to_string(offset) + ", file ends after " + std::to_string(done));
    }
    done += static_cast<size_t>(r);
  }
  return Status::OK();
}

Status PwriteFull(int fd, const void* buf, size_t n, uint64_t offset, const std::string& path) {
  const char* p = static_cast<const char*>(buf);
  size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pwrite(fd, p + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("write " + path + " at offset " + std::to_string(offset + done), errno);
    }
    if (r == 0) return ErrnoError("write " + path, ENOSPC);
    done += static_cast<size_t>(r);
  }
  return Status::OK();
}

Status CloseFd(ScopedFd* fd, const std::string& path) {
  const int f = fd->release();
  if (f >= 0 && ::close(f) != 0 && errno != EINTR) return ErrnoError("close " + path, errno);
  return Status::OK();
}

}  // namespace foresight::storage

namespace foresight::storage::internal {

Status FsyncFd(int fd, const std::string& path) {
  if (::fsync(fd) != 0) {
    // Character devices and some filesystems cannot fsync; nothing to make durable.
    if (errno == EINVAL || errno == EROFS) return Status::OK();
    return ErrnoError("fsync " + path, errno);
  }
  return Status::OK();
}

StatusOr<uint64_t> FileSizeOf(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoError("fstat " + path, errno);
  return static_cast<uint64_t>(st.st_size);
}

Status FsyncDir(const std::string& dir) {
  FS_ASSIGN_OR_RETURN(ScopedFd fd, OpenFile(dir, O_RDONLY | O_DIRECTORY));
  return FsyncFd(fd.get(), dir);
}

Status RenamePath(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoError("rename " + from + " -> " + to, errno);
  }
  return Status::OK();
}

Status RemoveAll(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return IoError("remove " + path + ": " + ec.message());
  return Status::OK();
}

std::string ParentDir(const std::string& path) {
  const std::filesystem::path p = std::filesystem::path(CleanPath(path)).parent_path();
  return p.empty() ? std::string(".") : p.string();
}

std::string CleanPath(const std::string& path) {
  std::string s = std::filesystem::path(path).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string RandomSuffix() {
  std::random_device rd;
  const uint64_t v = (uint64_t(rd()) << 32) ^ rd();
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return std::string(buf, 8);
}

StatusOr<std::string> ExistingDatasetDir(const std::string& dir_in) {
  const std::string dir = CleanPath(dir_in);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return ErrnoError("dataset dir " + dir, errno);
  if (!S_ISDIR(st.st_mode)) return InvalidArgument("dataset " + dir + " is not a directory");
  return dir;
}

}  // namespace foresight::storage::internal
