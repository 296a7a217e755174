#include "checkpoint_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "data_parallel.h"

namespace foresight::trainer::internal {

namespace {

// The pid the holder wrote into the lock file ("" when it has not yet).
std::string HolderPid(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

}  // namespace

// flock rather than fcntl locks: flock locks belong to the open file
// description, so two Train calls in one process exclude each other too
// (fcntl locks are per process and would let them both in), and the kernel
// drops the lock when the holder dies, however it dies (SIGKILL included):
// a killed run never leaves its directory locked.
StatusOr<std::unique_ptr<CheckpointDirLock>> CheckpointDirLock::Acquire(const std::string& dir) {
  std::error_code ec;
  bool created = std::filesystem::create_directories(dir, ec);
  if (ec) return ErrnoError("create checkpoint directory " + dir, ec.value());
  if (!std::filesystem::is_directory(dir, ec)) {
    return FailedPrecondition("checkpoint directory " + dir + " exists and is not a directory");
  }
  const std::string path = dir + "/" + kLockFile;
  // The holder unlinks the lock file before it unlocks (so a finished run
  // leaves none). A run that opened the file just before that unlink would
  // lock a file no longer in the directory, so after locking, check that
  // the path still names the locked file, and start over when it does not.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ENOENT) {
      // A previous holder that had created the directory removed it, empty,
      // as it ended (see the destructor): create it again.
      created = std::filesystem::create_directories(dir, ec) || created;
      continue;
    }
    if (fd < 0) return ErrnoError("open lock file " + path, errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err != EWOULDBLOCK) {
        ::close(fd);
        return ErrnoError("flock " + path, err);
      }
      const std::string pid = HolderPid(fd);
      ::close(fd);
      return FailedPrecondition("checkpoint directory " + dir + " is in use by another training (" +
                                (pid.empty() ? std::string("pid not yet written") : "pid " + pid) +
                                ", holding " + path +
                                "); two runs cannot share a --checkpoint directory: give this one another, "
                                "or wait for that one to end");
    }
    struct stat held, named;
    if (::fstat(fd, &held) != 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoError("fstat " + path, err);
    }
    if (::stat(path.c_str(), &named) != 0 || named.st_ino != held.st_ino || named.st_dev != held.st_dev) {
      ::close(fd);  // the previous holder removed it meanwhile
      continue;
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      const int err = errno;
      ::unlink(path.c_str());
      ::close(fd);
      return ErrnoError("write lock file " + path, err);
    }
    return std::unique_ptr<CheckpointDirLock>(new CheckpointDirLock(dir, fd, created));
  }
  return Internal("lock " + path + ": the lock file kept being replaced (100 attempts)");
}

CheckpointDirLock::~CheckpointDirLock() {
  ::unlink((dir_ + "/" + kLockFile).c_str());
  ::close(fd_);  // releases the lock
  // rmdir only removes an empty directory: one holding a checkpoint stays.
  if (created_dir_) ::rmdir(dir_.c_str());
}

Status OpenCheckpointDir(const std::string& dir, bool writer, Communicator* comm,
                         Status (*remove_leftovers)(const std::string&), std::unique_ptr<CheckpointDirLock>* lock) {
  Status s;
  if (writer) {
    StatusOr<std::unique_ptr<CheckpointDirLock>> acquired = CheckpointDirLock::Acquire(dir);
    s = acquired.status();
    if (s.ok()) {
      *lock = std::move(acquired).value();
      s = remove_leftovers(dir);
    }
  }
  if (comm != nullptr) s = AllRanksOk(comm, s, "opening the checkpoint directory " + dir);
  return s;
}

}  // namespace foresight::trainer::internal
