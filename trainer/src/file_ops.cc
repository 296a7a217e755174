#include "file_ops.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "test_points.h"

namespace foresight::trainer::internal {

namespace fs = std::filesystem;

namespace {

Status FromErrorCode(const std::string& what, const std::error_code& ec) {
  return ErrnoError(what, ec.value());
}

Status FsyncPath(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open " + path, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return ErrnoError("fsync " + path, err);
  return Status::OK();
}

std::string ParentOf(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

}  // namespace

Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return FromErrorCode("create directory " + dir, ec);
  if (!fs::is_directory(dir, ec)) return FailedPrecondition(dir + " exists and is not a directory");
  return Status::OK();
}

Status FsyncDir(const std::string& dir) { return FsyncPath(dir, /*directory=*/true); }

Status DurableRename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return ErrnoError("rename " + from + " to " + to, errno);
  return FsyncPath(ParentOf(to), /*directory=*/true);
}

Status RemoveAll(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return FromErrorCode("remove " + path, ec);
  return Status::OK();
}

bool PathExists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

Status WriteFileAtomic(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return ErrnoError("open " + tmp, errno);
  const bool wrote = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  const int write_err = errno;
  const bool flushed = std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
  const int flush_err = errno;
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !flushed || !closed) {
    ::unlink(tmp.c_str());
    return ErrnoError("write " + tmp, !wrote ? write_err : flush_err);
  }
  Status s = TestPoint("atomic-file.synced");
  if (s.ok()) s = DurableRename(tmp, path);
  if (!s.ok()) ::unlink(tmp.c_str());  // gone already when only the directory's fsync failed
  return s;
}

StatusOr<std::string> ReadWholeFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    if (errno == ENOENT) return NotFound(path + " does not exist");
    return ErrnoError("open " + path, errno);
  }
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return IoError("read " + path + " failed");
  return out;
}

}  // namespace foresight::trainer::internal
