#include "temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "foresight/core/logging.h"
#include "scratch_rows.h"

namespace foresight::trainer::internal {

StatusOr<std::unique_ptr<TempDir>> TempDir::Create(const std::string& parent, const std::string& prefix) {
  std::string templ = ScratchDirectory(parent) + "/" + prefix + "XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) return ErrnoError("create a table directory " + templ, errno);
  return std::unique_ptr<TempDir>(new TempDir(templ));
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  if (ec) {
    FS_LOG(WARNING) << "could not remove the table directory " << path_ << ": " << ec.message();
  }
}

}  // namespace foresight::trainer::internal
