// DatasetWriter: builds a dataset in a staging directory beside out_dir and
// renames it into place, so a crash never leaves a half-built dataset that
// looks valid (manifest.json is written last, and only inside staging,
// which Dataset::Open refuses: staging_dir.h).
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <vector>

#include "file_util.h"
#include "foresight/storage/clicks_dataset.h"
#include "foresight/storage/sequences_dataset.h"
#include "foresight/storage/link_triples.h"
#include "foresight/storage/dataset.h"
#include "staging_dir.h"
#include "test_hooks.h"

namespace foresight::storage {
namespace {

bool IsDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

bool IsEmptyDir(const std::string& p) {
  std::error_code ec;
  return IsDir(p) && std::filesystem::is_empty(p, ec) && !ec;
}

// A directory we may replace: its manifest.json is a JSON object whose
// "format" is ours (even if other fields are broken or from a newer version).
bool IsForesightDataset(const std::string& dir) {
  std::ifstream f(dir + "/" + kManifestFile, std::ios::binary);
  if (!f) return false;
  const nlohmann::json j = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  auto it = j.find("format");
  return it != j.end() && it->is_string() && it->get<std::string>() == kDatasetFormat;
}

Status CheckFileName(const std::string& file) {
  if (file.empty() || file.find('/') != std::string::npos || file == "." || file == ".." ||
      file == kManifestFile || file == internal::kStagingMarker) {
    return InvalidArgument("dataset file name \"" + file + "\" must be a plain name inside the dataset dir (and not " +
                           kManifestFile + " or " + internal::kStagingMarker + ")");
  }
  return Status::OK();
}

Status WriteFileDurably(const std::string& path, const std::string& contents) {
  FS_ASSIGN_OR_RETURN(internal::ScopedFd fd,
                      internal::OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
  FS_RETURN_IF_ERROR(internal::PwriteFull(fd.get(), contents.data(), contents.size(), 0, path));
  FS_RETURN_IF_ERROR(internal::FsyncFd(fd.get(), path));
  return internal::CloseFd(&fd, path);
}

// Makes `dir` and its missing ancestors; *made lists the ones made,
// deepest first (also on failure, for RemoveMadeDirs).
Status MakeDirs(const std::string& dir, std::vector<std::string>* made) {
  std::vector<std::string> missing;
  for (std::string p = dir; !Exists(p); p = internal::ParentDir(p)) {
    missing.push_back(p);
    if (p == "." || p == "/") break;
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    if (::mkdir(it->c_str(), 0755) != 0 && errno != EEXIST) return ErrnoError("mkdir " + *it, errno);
    made->insert(made->begin(), *it);
  }
  return Status::OK();
}

// Removes the directories MakeDirs made, deepest first, while they are
// empty (rmdir only: whatever another process put there stays).
void RemoveMadeDirs(const std::vector<std::string>& made) {
  for (const std::string& d : made) {
    if (::rmdir(d.c_str()) != 0) return;
  }
}

}  // namespace

DatasetWriter::DatasetWriter(std::string out_dir, std::string staging, bool overwrite,
                             std::vector<std::string> made_dirs)
    : out_dir_(std::move(out_dir)),
      staging_(std::move(staging)),
      overwrite_(overwrite),
      made_dirs_(std::move(made_dirs)) {}

DatasetWriter::~DatasetWriter() {
  if (committed_) return;
  // Removed while its marker is still locked (until only the marker is left).
  internal::RemoveStagingDir(staging_, &lock_).IgnoreError();
  RemoveMadeDirs(made_dirs_);
}

StatusOr<std::unique_ptr<DatasetWriter>> DatasetWriter::Create(const std::string& out_dir_in,
                                                               bool overwrite) {
  const std::string out_dir = internal::CleanPath(out_dir_in);
  if (out_dir.empty() || out_dir == "." || out_dir == "/") {
    return InvalidArgument("dataset output dir \"" + out_dir_in + "\" is not a usable path");
  }
  // What killed runs on this output left behind goes first, whatever this
  // run then decides.
  internal::RemoveStaleStaging(out_dir);
  if (Exists(out_dir)) {
    if (!overwrite) {
      return AlreadyExists("dataset output dir " + out_dir + " already exists (pass --overwrite to replace it)");
    }
    if (!IsEmptyDir(out_dir) && !(IsDir(out_dir) && IsForesightDataset(out_dir))) {
      return FailedPrecondition("refusing to overwrite " + out_dir +
                                ": it is not a foresight dataset (no manifest.json with format \"" +
                                kDatasetFormat + "\") and not empty; remove it or choose another path");
    }
  }
  std::vector<std::string> made;
  Status s = MakeDirs(internal::ParentDir(out_dir), &made);
  const std::string staging = internal::NewStagingPath(out_dir);
  if (s.ok() && ::mkdir(staging.c_str(), 0755) != 0) s = ErrnoError("mkdir " + staging, errno);
  if (!s.ok()) {
    RemoveMadeDirs(made);
    return s;
  }
  TestKillPoint("staging-created");
  // From here the writer's destructor cleans up.
  std::unique_ptr<DatasetWriter> w(new DatasetWriter(out_dir, staging, overwrite, std::move(made)));
  FS_RETURN_IF_ERROR(internal::WriteStagingMarker(staging, staging, out_dir, &w->lock_));
  TestKillPoint("staging-locked");
  return w;
}

std::string DatasetWriter::StagingPath(const std::string& file) const { return staging_ + "/" + file; }

StatusOr<std::unique_ptr<NpyWriter>> DatasetWriter::OpenArray(const std::string& file, DType dtype,
                                                              Shape inner) {
  FS_RETURN_IF_ERROR(CheckFileName(file));
  if (committed_) return FailedPrecondition(out_dir_ + ": OpenArray after Commit");
  return NpyWriter::Create(StagingPath(file), dtype, std::move(inner));
}

Status DatasetWriter::WriteArray(const std::string& file, const Tensor& t) {
  FS_RETURN_IF_ERROR(CheckFileName(file));
  if (committed_) return FailedPrecondition(out_dir_ + ": WriteArray after Commit");
  return SaveNpy(StagingPath(file), t);
}

Status DatasetWriter::Commit() {
  if (committed_) return FailedPrecondition(out_dir_ + ": Commit called twice");
  // "arrays" from the .npy files present, in name order.
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& ent : std::filesystem::directory_iterator(staging_, ec)) {
    const std::string name = ent.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) files.push_back(name);
  }
  if (ec) return IoError("list " + staging_ + ": " + ec.message());
  std::sort(files.begin(), files.end());
  manifest_.arrays.clear();
  for (const std::string& file : files) {
    const std::string path = StagingPath(file);
    FS_ASSIGN_OR_RETURN(NpyInfo info, ReadNpyHeader(path));
    ArrayEntry e;
    e.file = file;
    e.dtype = info.is_bytes ? "S" + std::to_string(info.item_size) : DTypeName(info.dtype);
    e.shape = info.shape;
    manifest_.arrays[file.substr(0, file.size() - 4)] = e;
    // Files written by tools through StagingPath may not be synced yet.
    FS_ASSIGN_OR_RETURN(internal::ScopedFd fd, internal::OpenFile(path, O_RDONLY));
    FS_RETURN_IF_ERROR(internal::FsyncFd(fd.get(), path));
  }
  manifest_.format = kDatasetFormat;
  manifest_.version = kDatasetVersion;
  FS_RETURN_IF_ERROR(WriteFileDurably(StagingPath(kManifestFile), manifest_.ToJson().dump(2) + "\n"));
  TestKillPoint("manifest-written");
  // Refuse to publish something Dataset::Open would reject.
  {
    // Validated by the reader of its kind, skipping only the staging check.
    Status check = manifest_.kind == kKindClicks      ? ClicksDataset::OpenDir(staging_, /*validate_ids=*/true).status()
                   : manifest_.kind == kKindSequences ? SequencesDataset::OpenDir(staging_).status()
                                                      : Dataset::OpenDir(staging_, /*validate_ids=*/true).status();
    if (check.ok() && !manifest_.link.is_null()) check = LinkTriples::OpenDir(staging_).status();
    if (!check.ok()) return check.WithContext("dataset " + out_dir_ + " not committed");
  }
  FS_RETURN_IF_ERROR(internal::FsyncDir(staging_));
  TestKillPoint("before-commit");

  if (Exists(out_dir_)) {
    if (!overwrite_) {
      return AlreadyExists("dataset output dir " + out_dir_ + " appeared while writing; not replaced");
    }
    if (!IsEmptyDir(out_dir_) && !(IsDir(out_dir_) && IsForesightDataset(out_dir_))) {
      return FailedPrecondition("refusing to overwrite " + out_dir_ + ": it is not a foresight dataset");
    }
    return Replace();
  }
  // The commit: one rename, after which out_dir opens (the marker inside
  // now names another directory).
  FS_RETURN_IF_ERROR(internal::RenamePath(staging_, out_dir_));
  committed_ = true;
  TestKillPoint("committed");
  lock_ = ScopedFd();  // no longer needed; closed first so NFS deletes the file outright
  internal::RemoveStagingMarker(out_dir_);
  return internal::FsyncDir(internal::ParentDir(out_dir_));
}

Status DatasetWriter::Replace() {
  // The old dataset is first marked (and locked) as a staging dir under the
  // name it will have once swapped out, so that from the swap on it is
  // refused by Dataset::Open and removed by the next run if this one dies.
  const bool exchange = internal::RenameExchangeAllowed();
  std::string old_at = exchange ? staging_ : internal::NewStagingPath(out_dir_);
  ScopedFd old_lock;
  FS_RETURN_IF_ERROR(internal::WriteStagingMarker(out_dir_, old_at, out_dir_, &old_lock));
  TestKillPoint("old-marked");
  bool swapped = false;
  if (exchange) {
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, out_dir_.c_str(), RENAME_EXCHANGE) == 0) {
      swapped = true;
    } else if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
      const int err = errno;
      internal::RemoveStagingMarker(out_dir_);
      return ErrnoError("renameat2(RENAME_EXCHANGE) " + staging_ + " <-> " + out_dir_, err);
    } else {
      // This file system cannot swap: two renames, under a fresh name.
      old_at = internal::NewStagingPath(out_dir_);
      FS_RETURN_IF_ERROR(internal::RewriteStagingMarker(old_lock.get(), out_dir_ + "/" + internal::kStagingMarker,
                                                        old_at, out_dir_));
    }
  }
  if (!swapped) {
    // out_dir is absent between these two renames.
    FS_RETURN_IF_ERROR(internal::RenamePath(out_dir_, old_at));
    TestKillPoint("old-moved");
    Status s = internal::RenamePath(staging_, out_dir_);
    if (!s.ok()) {
      if (internal::RenamePath(old_at, out_dir_).ok()) internal::RemoveStagingMarker(out_dir_);
      return s;
    }
  }
  committed_ = true;
  TestKillPoint("committed");
  lock_ = ScopedFd();  // no longer needed; closed first so NFS deletes the file outright
  internal::RemoveStagingMarker(out_dir_);
  FS_RETURN_IF_ERROR(internal::FsyncDir(internal::ParentDir(out_dir_)));
  TestKillPoint("replaced");
  // Deleted while old_lock still holds its marker: no other run touches it.
  return internal::RemoveStagingDir(old_at, &old_lock);
}

}  // namespace foresight::storage
