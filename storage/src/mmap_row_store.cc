// The mmap backend: a 2-D .npy mapped MAP_SHARED, read-only or read-write.
// Touched pages count as the process's RSS (the page cache backs them), so
// out-of-core runs use the disk backend instead.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "file_util.h"
#include "host_row_store.h"

namespace foresight::storage::internal {

StatusOr<std::unique_ptr<RowStore>> OpenMmapRowStore(const RowStoreOptions& options) {
  FS_ASSIGN_OR_RETURN(NpyInfo info, PrepareDenseFile(options));
  const std::string& path = options.path;
  FS_ASSIGN_OR_RETURN(ScopedFd fd, OpenFile(path, options.writable ? O_RDWR : O_RDONLY));
  // The header was validated through another descriptor; recheck the size
  // on this one so a file swapped in between cannot be mapped short.
  FS_ASSIGN_OR_RETURN(uint64_t size, FileSizeOf(fd.get(), path));
  const uint64_t expected = info.data_offset + info.data_bytes();
  if (size != expected) {
    return DataLoss(path + ": expected " + std::to_string(expected) + " bytes, file has " +
                    std::to_string(size) + " (changed while opening?)");
  }
  const int64_t num_rows = info.shape[0];
  char* base = nullptr;
  std::shared_ptr<void> owner;
  if (info.data_bytes() > 0) {
    // The whole file from offset 0: mmap offsets must be page aligned and
    // numpy's own files put the data at a 64-byte boundary.
    const size_t len = static_cast<size_t>(expected);
    const int prot = PROT_READ | (options.writable ? PROT_WRITE : 0);
    void* map = ::mmap(nullptr, len, prot, MAP_SHARED, fd.get(), 0);
    if (map == MAP_FAILED) return ErrnoError("mmap " + path, errno);
    owner = std::shared_ptr<void>(map, [len](void* p) { ::munmap(p, len); });
    base = static_cast<char*>(map) + info.data_offset;
  }
  std::function<Status()> flush;
  if (options.writable && owner != nullptr) {
    void* map = owner.get();
    const size_t len = static_cast<size_t>(expected);
    flush = [map, len, path]() -> Status {
      if (::msync(map, len, MS_SYNC) != 0) return ErrnoError("msync " + path, errno);
      return Status::OK();
    };
  }
  return std::unique_ptr<RowStore>(new HostRowStore("mmap", path, info.dtype, info.shape[1],
                                                    base, num_rows, options.writable,
                                                    std::move(owner), std::move(flush)));
}

}  // namespace foresight::storage::internal
