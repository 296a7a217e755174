// DatasetWriter: builds a dataset in a staging directory beside out_dir and
// renames it into place, so a crash never leaves a half-built dataset that
// looks valid (manifest.json is written last, and only inside staging).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <vector>

#include "file_util.h"
#include "foresight/storage/clicks_dataset.h"
#include "foresight/storage/dataset.h"

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
      file == kManifestFile) {
    return InvalidArgument("dataset file name \"" + file +
                           "\" must be a plain name inside the dataset dir (and not manifest.json)");
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

}  // namespace

DatasetWriter::DatasetWriter(std::string out_dir, std::string staging, bool overwrite)
    : out_dir_(std::move(out_dir)), staging_(std::move(staging)), overwrite_(overwrite) {}

DatasetWriter::~DatasetWriter() {
  if (!committed_) internal::RemoveAll(staging_).IgnoreError();
}

StatusOr<std::unique_ptr<DatasetWriter>> DatasetWriter::Create(const std::string& out_dir_in,
                                                               bool overwrite) {
  const std::string out_dir = internal::CleanPath(out_dir_in);
  if (out_dir.empty() || out_dir == "." || out_dir == "/") {
    return InvalidArgument("dataset output dir \"" + out_dir_in + "\" is not a usable path");
  }
  if (Exists(out_dir)) {
    if (!overwrite) {
      return AlreadyExists("dataset output dir " + out_dir + " already exists (pass overwrite to replace it)");
    }
    if (!IsEmptyDir(out_dir) && !(IsDir(out_dir) && IsForesightDataset(out_dir))) {
      return FailedPrecondition("refusing to overwrite " + out_dir +
                                ": it is not a foresight dataset (no manifest.json with format \"" +
                                kDatasetFormat + "\") and not empty; remove it or choose another path");
    }
  }
  const std::string parent = internal::ParentDir(out_dir);
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) return IoError("create directory " + parent + ": " + ec.message());
  const std::string staging =
      out_dir + ".tmp-" + std::to_string(::getpid()) + "-" + internal::RandomSuffix();
  if (::mkdir(staging.c_str(), 0755) != 0) return ErrnoError("mkdir " + staging, errno);
  return std::unique_ptr<DatasetWriter>(new DatasetWriter(out_dir, staging, overwrite));
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
  // Refuse to publish something Dataset::Open would reject.
  {
    const Status check = manifest_.kind == kKindClicks
                             ? ClicksDataset::Open(staging_).status()
                             : Dataset::Open(staging_, /*validate_ids=*/true).status();
    if (!check.ok()) return check.WithContext("dataset " + out_dir_ + " not committed");
  }
  FS_RETURN_IF_ERROR(internal::FsyncDir(staging_));

  const std::string parent = internal::ParentDir(out_dir_);
  if (Exists(out_dir_)) {
    if (!overwrite_) {
      return AlreadyExists("dataset output dir " + out_dir_ + " appeared while writing; not replaced");
    }
    if (!IsEmptyDir(out_dir_) && !(IsDir(out_dir_) && IsForesightDataset(out_dir_))) {
      return FailedPrecondition("refusing to overwrite " + out_dir_ + ": it is not a foresight dataset");
    }
    // Old away, new in, then delete old: out_dir is never a partial dataset.
    const std::string old =
        out_dir_ + ".old-" + std::to_string(::getpid()) + "-" + internal::RandomSuffix();
    FS_RETURN_IF_ERROR(internal::RenamePath(out_dir_, old));
    Status s = internal::RenamePath(staging_, out_dir_);
    if (!s.ok()) {
      internal::RenamePath(old, out_dir_).IgnoreError();
      return s;
    }
    committed_ = true;
    FS_RETURN_IF_ERROR(internal::FsyncDir(parent));
    return internal::RemoveAll(old);
  }
  FS_RETURN_IF_ERROR(internal::RenamePath(staging_, out_dir_));
  committed_ = true;
  return internal::FsyncDir(parent);
}

}  // namespace foresight::storage
