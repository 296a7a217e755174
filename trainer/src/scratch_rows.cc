#include "scratch_rows.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "foresight/core/logging.h"

namespace foresight::trainer::internal {

namespace {

// Process-wide, so two inferences in one process never share a file name.
std::atomic<uint64_t> scratch_counter{0};

}  // namespace

std::string ScratchDirectory(const std::string& dir) {
  if (!dir.empty()) return dir;
  const char* tmp = std::getenv("TMPDIR");
  if (tmp != nullptr && tmp[0] != '\0') return tmp;
  return "/tmp";
}

StatusOr<std::unique_ptr<ScratchRows>> ScratchRows::Create(int64_t rows, int64_t width, bool in_ram,
                                                           const std::string& dir) {
  if (rows < 0 || width < 1) {
    return InvalidArgument("scratch rows: need rows >= 0 and width >= 1, got " + std::to_string(rows) + " x " +
                           std::to_string(width));
  }
  std::unique_ptr<ScratchRows> s(new ScratchRows());
  s->bytes_ = rows * width * static_cast<int64_t>(sizeof(float));
  if (in_ram) {
    // Uninitialised: inference reads back only the rows it wrote.
    s->rows_ = Tensor::Empty({rows, width}, DType::kF32);
    FS_ASSIGN_OR_RETURN(s->store_, storage::MemoryRowStore(s->rows_, /*writable=*/true));
    return s;
  }
  storage::RowStoreOptions o;
  o.kind = storage::RowStoreKind::kDisk;
  o.path = ScratchDirectory(dir) + "/foresight-hidden-" + std::to_string(::getpid()) + "-" +
           std::to_string(scratch_counter.fetch_add(1)) + ".npy";
  o.writable = true;
  o.create = true;
  o.dtype = DType::kF32;
  o.row_width = width;
  o.rows = rows;
  // Buffered: the rows are read back soon after they are written, so the
  // page cache serves them, and they need no O_DIRECT alignment.
  o.direct_io = false;
  // The name is this process's own: a file left there by a crashed process
  // that had the same pid is stale.
  ::unlink(o.path.c_str());
  s->path_ = o.path;  // from here on the destructor removes the file
  auto store = storage::OpenRowStore(o);
  if (!store.ok()) {
    return Status(store.status().code(), "layer-wise inference scratch file (in " + ScratchDirectory(dir) +
                                             "; choose another scratch directory): " + store.status().message());
  }
  s->store_ = std::move(store).value();
  // The store holds its descriptor: removing the name now frees the space
  // when the store closes, even if the process dies first.
  if (::unlink(s->path_.c_str()) == 0) s->path_removed_ = true;
  return s;
}

ScratchRows::~ScratchRows() {
  store_.reset();
  if (!path_.empty() && !path_removed_ && ::unlink(path_.c_str()) != 0 && errno != ENOENT) {
    FS_LOG(WARNING) << "could not remove the scratch file " << path_ << ": " << std::strerror(errno);
  }
}

}  // namespace foresight::trainer::internal
