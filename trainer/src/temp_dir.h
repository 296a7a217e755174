// TempDir: a new directory for a run's file-backed tables (learned node
// features, DLRM tables, link-prediction entity rows), removed with
// everything in it when the object goes. One mechanism, so every table
// honours the same parent rule (table_dir, else $TMPDIR, else /tmp).
#pragma once

#include <memory>
#include <string>

#include "foresight/core/status.h"

namespace foresight::trainer::internal {

class TempDir {
 public:
  // A new directory `prefix`XXXXXX in ScratchDirectory(parent).
  static StatusOr<std::unique_ptr<TempDir>> Create(const std::string& parent, const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace foresight::trainer::internal
