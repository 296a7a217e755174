#include "staging_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/core/logging.h"
#include "foresight/storage/dataset.h"

namespace foresight::storage {
namespace internal {
namespace {

using nlohmann::json;

constexpr char kTmpInfix[] = ".tmp-";
// Replaces before staging markers moved the old dataset aside as
// "<out>.old-<pid>-<8 hex>" and removed it after the swap; a run killed in
// between left it behind.
constexpr char kOldInfix[] = ".old-";
// A marker is a few hundred bytes; anything far larger is not one of ours.
constexpr uint64_t kMaxMarkerBytes = 64 << 10;

struct Marker {
  std::string staged_as;  // the name of the directory it marks
  std::string output;
  int64_t pid = 0;
  std::string host;
};

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string HostName() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

std::string MarkerText(const std::string& staged_as, const std::string& out_dir) {
  const json j = {
      {"about", "staging directory of a foresight dataset being written (or left by a killed run); it is not a "
                "dataset under this name, and the next run writing the output removes it once stale"},
      {"staged_as", BaseName(staged_as)},
      {"output", out_dir},
      {"pid", static_cast<int64_t>(::getpid())},
      {"host", HostName()}};
  // Paths are raw bytes; JSON wants UTF-8.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

// The marker's fields, or nullopt when `text` is not a complete marker (a
// writer killed while writing it, or a foreign file).
std::optional<Marker> ParseMarker(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  const auto staged = j.find("staged_as"), output = j.find("output"), pid = j.find("pid"), host = j.find("host");
  if (staged == j.end() || !staged->is_string() || output == j.end() || !output->is_string() || pid == j.end() ||
      !pid->is_number_integer() || host == j.end() || !host->is_string()) {
    return std::nullopt;
  }
  return Marker{staged->get<std::string>(), output->get<std::string>(), pid->get<int64_t>(), host->get<std::string>()};
}

std::optional<Marker> ReadMarkerFd(int fd, const std::string& path) {
  auto size = FileSizeOf(fd, path);
  if (!size.ok() || *size == 0 || *size > kMaxMarkerBytes) return std::nullopt;
  std::string text(static_cast<size_t>(*size), '\0');
  if (!PreadFull(fd, text.data(), text.size(), 0, path).ok()) return std::nullopt;
  return ParseMarker(text);
}

// flock(LOCK_EX | LOCK_NB): 0, or the errno (EWOULDBLOCK: another open file
// description holds it, i.e. a live writer).
int TryLock(int fd) {
  int r;
  do {
    r = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (r != 0 && errno == EINTR);
  return r == 0 ? 0 : errno;
}

bool PidRunning(int64_t pid) {
  if (pid <= 0 || pid > INT_MAX) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// The pid of "<pid>-<8 lower-case hex>", or -1 when `rest` is not that.
int64_t StagingSuffixPid(const std::string& rest) {
  const size_t dash = rest.find('-');
  if (dash == 0 || dash == std::string::npos || dash > 10 || rest.size() != dash + 9) return -1;
  int64_t pid = 0;
  for (size_t i = 0; i < dash; ++i) {
    if (rest[i] < '0' || rest[i] > '9') return -1;
    pid = pid * 10 + (rest[i] - '0');
  }
  for (size_t i = dash + 1; i < rest.size(); ++i) {
    const char c = rest[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return -1;
  }
  return pid;
}

// Decides whether staging dir `path` (named with `name_pid`) is stale and
// removes it if so. Its marker's lock, when we take it, is held until the
// removal is done, so two runs cleaning at once do not race.
void RemoveIfStale(const std::string& path, int64_t name_pid, const std::string& out_dir) {
  const std::string marker_path = path + "/" + kStagingMarker;
  std::string why;
  auto opened = OpenFile(marker_path, O_RDWR | O_NOFOLLOW);
  if (!opened.ok() && opened.status().code() != StatusCode::kNotFound) {
    opened = OpenFile(marker_path, O_RDONLY | O_NOFOLLOW);  // not ours to write: locking still works
  }
  ScopedFd lock;
  std::optional<Marker> marker;
  if (opened.ok()) {
    lock = std::move(opened).value();
    const int err = TryLock(lock.get());
    if (err == EWOULDBLOCK) return;  // its writer is running
    if (err != 0) {
      FS_LOG(WARNING) << "kept staging directory " << path << ": cannot tell whether a process is still writing it ("
                      << "flock " << marker_path << ": " << std::strerror(err)
                      << "); remove it by hand once no foresight process writes " << out_dir;
      return;
    }
    marker = ReadMarkerFd(lock.get(), marker_path);
  } else if (opened.status().code() != StatusCode::kNotFound) {
    FS_LOG(WARNING) << "kept staging directory " << path << ": " << opened.status().message();
    return;
  }
  if (marker.has_value()) {
    const std::string here = HostName();
    if (marker->host != here) {
      // Locks need not reach across hosts on a network file system.
      FS_LOG(WARNING) << "kept staging directory " << path << ": written by process " << marker->pid << " on host "
                      << marker->host << ", not this host (" << here
                      << "); remove it by hand once no foresight process there writes " << out_dir;
      return;
    }
    why = "left by process " + std::to_string(marker->pid) + ", which died: its lock is free";
  } else {
    // No complete marker: its writer was killed between the mkdir and the
    // marker (or is there now). Only the pid in the name can tell; a
    // running process with that pid keeps the directory.
    if (PidRunning(name_pid)) return;
    why = "left by process " + std::to_string(name_pid) + ", which no longer runs";
  }
  const Status s = RemoveStagingDir(path, &lock);
  if (!s.ok()) {
    FS_LOG(WARNING) << "could not remove stale staging directory " << path << " (" << why << "): " << s.message();
    return;
  }
  FS_LOG(WARNING) << "removed stale staging directory " << path << " (" << why << ")";
}

// `path` ("<out>.old-<pid>-<hex>", its replacing process gone) is garbage
// once the output is a dataset again (the replace got past its second
// rename); while the output is missing it may be the only copy of the old
// dataset, so it stays, and the log says how to restore it.
void RemoveOldIfReplaced(const std::string& path, int64_t pid, const std::string& out_dir) {
  struct stat st;
  if (::stat((out_dir + "/" + kManifestFile).c_str(), &st) != 0) {
    FS_LOG(WARNING) << "kept " << path << ": the dataset that a replace of " << out_dir << " by process " << pid
                    << " (which died) moved aside, and " << out_dir << " is missing; rename it to " << out_dir
                    << " to restore it";
    return;
  }
  const Status s = RemoveStagingDir(path);
  if (!s.ok()) {
    FS_LOG(WARNING) << "could not remove " << path << ", an old dataset that a replace by process " << pid
                    << " left: " << s.message();
    return;
  }
  FS_LOG(WARNING) << "removed " << path << ": the old dataset that a replace of " << out_dir << " by process "
                  << pid << " moved aside before it died";
}

}  // namespace

std::string NewStagingPath(const std::string& out_dir) {
  return out_dir + kTmpInfix + std::to_string(::getpid()) + "-" + RandomSuffix();
}

Status WriteStagingMarker(const std::string& dir, const std::string& staged_as, const std::string& out_dir,
                          ScopedFd* lock) {
  const std::string path = dir + "/" + kStagingMarker;
  FS_ASSIGN_OR_RETURN(ScopedFd fd, OpenFile(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0644));
  const int err = TryLock(fd.get());
  if (err == EWOULDBLOCK) {
    const std::optional<Marker> other = ReadMarkerFd(fd.get(), path);
    return FailedPrecondition(dir + " is being replaced by another foresight process" +
                              (other ? " (pid " + std::to_string(other->pid) + " on host " + other->host + ")"
                                     : std::string()) +
                              "; wait for it to finish");
  }
  if (err != 0) {
    FS_LOG(WARNING) << "cannot lock " << path << " (" << std::strerror(err)
                    << "); if this run dies, later runs will not remove " << dir;
  }
  FS_RETURN_IF_ERROR(RewriteStagingMarker(fd.get(), path, staged_as, out_dir));
  *lock = std::move(fd);
  return Status::OK();
}

Status RewriteStagingMarker(int fd, const std::string& path, const std::string& staged_as,
                            const std::string& out_dir) {
  const std::string text = MarkerText(staged_as, out_dir);
  if (::ftruncate(fd, 0) != 0) return ErrnoError("ftruncate " + path, errno);
  FS_RETURN_IF_ERROR(PwriteFull(fd, text.data(), text.size(), 0, path));
  return FsyncFd(fd, path);
}

void RemoveStagingMarker(const std::string& dir) {
  const std::string path = dir + "/" + kStagingMarker;
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    FS_LOG(WARNING) << "dataset " << dir << " is complete, but its staging marker stays: unlink " << path << ": "
                    << std::strerror(errno);
  }
}

Status RemoveStagingDir(const std::string& dir, ScopedFd* lock) {
  const std::string manifest = dir + "/" + kManifestFile;
  if (::unlink(manifest.c_str()) != 0 && errno != ENOENT && errno != EISDIR) {
    return ErrnoError("unlink " + manifest, errno);
  }
  std::vector<std::string> rest;
  {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return errno == ENOENT ? Status::OK() : ErrnoError("opendir " + dir, errno);
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != ".." && name != kStagingMarker) rest.push_back(name);
    }
    ::closedir(d);
  }
  for (const std::string& name : rest) FS_RETURN_IF_ERROR(RemoveAll(dir + "/" + name));
  if (lock != nullptr) *lock = ScopedFd();
  return RemoveAll(dir);  // the marker, then the directory
}

void RemoveStaleStaging(const std::string& out_dir) {
  const std::string parent = ParentDir(out_dir);
  const std::string prefix = BaseName(out_dir) + kTmpInfix;
  const std::string old_prefix = BaseName(out_dir) + kOldInfix;
  DIR* d = ::opendir(parent.c_str());
  if (d == nullptr) return;  // no parent yet: nothing was left there
  std::vector<std::pair<std::string, int64_t>> candidates, old_candidates;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) == 0) {
      const int64_t pid = StagingSuffixPid(name.substr(prefix.size()));
      if (pid >= 0) candidates.emplace_back(name, pid);
    } else if (name.compare(0, old_prefix.size(), old_prefix) == 0) {
      const int64_t pid = StagingSuffixPid(name.substr(old_prefix.size()));
      if (pid >= 0) old_candidates.emplace_back(name, pid);
    }
  }
  ::closedir(d);
  // Named as the user named the output ("out.tmp-..." for "out").
  auto path_of = [&](const std::string& name) {
    return out_dir.find('/') == std::string::npos ? name : parent + "/" + name;
  };
  // Never follow a link: only real directories are ours to remove.
  auto is_dir = [](const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  };
  for (const auto& [name, pid] : candidates) {
    const std::string path = path_of(name);
    if (is_dir(path)) RemoveIfStale(path, pid, out_dir);
  }
  for (const auto& [name, pid] : old_candidates) {
    const std::string path = path_of(name);
    if (!is_dir(path) || PidRunning(pid)) continue;
    RemoveOldIfReplaced(path, pid, out_dir);
  }
}

}  // namespace internal

Status CheckNotStagingDir(const std::string& dir) {
  const std::string path = dir + "/" + internal::kStagingMarker;
  auto fd = internal::OpenFile(path, O_RDONLY | O_NOFOLLOW);
  if (!fd.ok()) return Status::OK();  // no marker (an unreadable one cannot mark anything either)
  const std::optional<internal::Marker> m = internal::ReadMarkerFd(fd->get(), path);
  if (!m.has_value()) return Status::OK();  // being written: the dir has no manifest yet
  // The directory's own name, through any symlink that leads to it.
  char* real = ::realpath(dir.c_str(), nullptr);
  const std::string name = internal::BaseName(internal::CleanPath(real != nullptr ? real : dir));
  std::free(real);
  if (m->staged_as != name) return Status::OK();  // a marker left in a committed dataset
  return FailedPrecondition(dir + " is the staging directory of an unfinished write of dataset " + m->output +
                            " (by process " + std::to_string(m->pid) + " on host " + m->host +
                            ", running or killed), not a dataset. Run the command that writes " + m->output +
                            " again: it removes stale staging directories");
}

}  // namespace foresight::storage
