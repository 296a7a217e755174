// RowStore: kind parsing, the blocking conveniences, the OpenRowStore
// factory and the helpers every backend shares.
#include "foresight/storage/row_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "file_util.h"
#include "foresight/core/thread_pool.h"
#include "row_store_internal.h"

namespace foresight::storage {

Status RowStore::Read(const std::vector<RowRequest>& reqs, uint8_t* absent) {
  FS_ASSIGN_OR_RETURN(IoTicket t, SubmitRead(reqs, absent));
  return Wait(t);
}

Status RowStore::Write(const std::vector<RowRequest>& reqs) {
  FS_ASSIGN_OR_RETURN(IoTicket t, SubmitWrite(reqs));
  return Wait(t);
}

StatusOr<RowStoreKind> ParseRowStoreKind(const std::string& name) {
  if (name == "memory") return RowStoreKind::kMemory;
  if (name == "mmap") return RowStoreKind::kMmap;
  if (name == "disk") return RowStoreKind::kDisk;
  if (name == "rocksdb") return RowStoreKind::kRocksDb;
  return InvalidArgument("unknown row store '" + name +
                         "' (expected one of: memory, mmap, disk, rocksdb)");
}

const char* RowStoreKindName(RowStoreKind kind) {
  switch (kind) {
    case RowStoreKind::kMemory: return "memory";
    case RowStoreKind::kMmap: return "mmap";
    case RowStoreKind::kDisk: return "disk";
    case RowStoreKind::kRocksDb: return "rocksdb";
  }
  return "?";
}

StatusOr<std::unique_ptr<RowStore>> OpenRowStore(const RowStoreOptions& options) {
  if (options.row_width < 0) {
    return InvalidArgument("row store " + options.path + ": row_width must be >= 0, got " +
                           std::to_string(options.row_width));
  }
  switch (options.kind) {
    case RowStoreKind::kMemory: return internal::OpenMemoryRowStore(options);
    case RowStoreKind::kMmap: return internal::OpenMmapRowStore(options);
    case RowStoreKind::kDisk: return internal::OpenDiskRowStore(options);
    case RowStoreKind::kRocksDb: return internal::OpenRocksDbRowStore(options);
  }
  return InvalidArgument("unknown RowStoreKind");
}

namespace internal {

Status CheckDenseKeys(const std::vector<RowRequest>& reqs, int64_t num_rows, const char* what) {
  for (size_t i = 0; i < reqs.size(); ++i) {
    const int64_t k = reqs[i].key;
    if (k < 0 || k >= num_rows) {
      return OutOfRange(std::string(what) + ": key " + std::to_string(k) + " at position " +
                        std::to_string(i) + " is outside [0, " + std::to_string(num_rows) +
                        ")");
    }
  }
  return Status::OK();
}

Status CheckBuffers(const std::vector<RowRequest>& reqs) {
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (reqs[i].data == nullptr) {
      return InvalidArgument("row request at position " + std::to_string(i) + " (key " +
                             std::to_string(reqs[i].key) + ") has a null buffer");
    }
  }
  return Status::OK();
}

Status CreateDenseNpy(const std::string& path, DType dtype, int64_t rows, int64_t row_width) {
  if (rows < 0 || row_width <= 0) {
    return InvalidArgument(path + ": creating a row store needs rows >= 0 and row_width > 0, got " +
                           std::to_string(rows) + " x " + std::to_string(row_width));
  }
  FS_ASSIGN_OR_RETURN(std::string descr, NpyDescr(dtype));
  FS_ASSIGN_OR_RETURN(std::string header, BuildNpyHeader(descr, {rows, row_width}));
  const uint64_t size = header.size() + uint64_t(rows) * uint64_t(row_width) * DTypeSize(dtype);
  const std::string tmp = path + ".tmp-" + RandomSuffix();
  FS_ASSIGN_OR_RETURN(ScopedFd fd, OpenFile(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644));
  Status s = PwriteFull(fd.get(), header.data(), header.size(), 0, tmp);
  // ftruncate leaves the data a hole that reads as zeros and costs no disk.
  if (s.ok() && ::ftruncate(fd.get(), static_cast<off_t>(size)) != 0) {
    s = ErrnoError("ftruncate " + tmp + " to " + std::to_string(size) + " bytes", errno);
  }
  if (s.ok()) s = FsyncFd(fd.get(), tmp);
  if (s.ok()) s = CloseFd(&fd, tmp);
  if (s.ok()) s = RenamePath(tmp, path);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return FsyncDir(ParentDir(path));
}

StatusOr<NpyInfo> PrepareDenseFile(const RowStoreOptions& options) {
  const std::string& path = options.path;
  const char* kind = RowStoreKindName(options.kind);
  if (path.empty()) return InvalidArgument(std::string(kind) + " row store: no file path given");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return ErrnoError("stat " + path, errno);
    if (!options.create) {
      return NotFound(path + ": no such file (" + kind +
                      " row store; expected a 2-D .npy of rows)");
    }
    if (!options.writable) {
      return InvalidArgument(path + ": creating a read-only " + std::string(kind) +
                             " row store makes no sense (set writable)");
    }
    FS_RETURN_IF_ERROR(CreateDenseNpy(path, options.dtype, options.rows, options.row_width));
  } else if (S_ISDIR(st.st_mode)) {
    return InvalidArgument(path + " is a directory; a " + std::string(kind) +
                           " row store needs a 2-D .npy file");
  }
  FS_ASSIGN_OR_RETURN(NpyInfo info, ReadNpyHeader(path));
  if (info.is_bytes || info.shape.size() != 2) {
    return InvalidArgument(path + ": a row store needs a 2-D numeric .npy array (rows x width), got " +
                           (info.is_bytes ? std::string("byte strings of shape ") : std::string("shape ")) +
                           ShapeToString(info.shape));
  }
  if (options.row_width > 0 &&
      (info.shape[1] != options.row_width || info.dtype != options.dtype)) {
    return InvalidArgument(path + ": holds rows of " + std::to_string(info.shape[1]) + " x " +
                           DTypeName(info.dtype) + ", expected " +
                           std::to_string(options.row_width) + " x " + DTypeName(options.dtype));
  }
  if (options.create && options.rows > 0 && info.shape[0] != options.rows) {
    return InvalidArgument(path + ": exists with " + std::to_string(info.shape[0]) +
                           " rows, expected " + std::to_string(options.rows));
  }
  return info;
}

namespace {

// Batches smaller than this are copied on the calling thread: waking the
// pool costs more than the copy.
constexpr size_t kParallelCopyBytes = size_t(1) << 20;
constexpr size_t kCopyChunkBytes = size_t(256) << 10;

template <typename Fn>
void ForRows(size_t n, size_t row_bytes, const Fn& fn) {
  if (n * row_bytes < kParallelCopyBytes) {
    fn(size_t(0), n);
    return;
  }
  const int64_t grain = static_cast<int64_t>(std::max<size_t>(1, kCopyChunkBytes / row_bytes));
  DefaultThreadPool()->ParallelFor(static_cast<int64_t>(n), grain, [&](int64_t b, int64_t e) {
    fn(static_cast<size_t>(b), static_cast<size_t>(e));
  });
}

}  // namespace

void CopyRowsOut(const char* base, size_t row_bytes, const std::vector<RowRequest>& reqs) {
  ForRows(reqs.size(), row_bytes, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      std::memcpy(reqs[i].data, base + size_t(reqs[i].key) * row_bytes, row_bytes);
    }
  });
}

void CopyRowsIn(char* base, size_t row_bytes, const std::vector<RowRequest>& reqs) {
  // Serial when one submission writes a key twice would be the only way to
  // make "last one wins" hold; the contract leaves that order open, and the
  // chunks are disjoint request ranges, so parallel is fine.
  ForRows(reqs.size(), row_bytes, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      std::memcpy(base + size_t(reqs[i].key) * row_bytes, reqs[i].data, row_bytes);
    }
  });
}

RowStoreStats AtomicStats::Snapshot() const {
  RowStoreStats s;
  s.read_requests = read_requests_.load(std::memory_order_relaxed);
  s.write_requests = write_requests_.load(std::memory_order_relaxed);
  s.absent_rows = absent_rows_.load(std::memory_order_relaxed);
  s.device_reads = device_reads_.load(std::memory_order_relaxed);
  s.device_writes = device_writes_.load(std::memory_order_relaxed);
  s.bytes_read = bytes_read_.load(std::memory_order_relaxed);
  s.bytes_written = bytes_written_.load(std::memory_order_relaxed);
  return s;
}

void AtomicStats::Reset() {
  for (auto* c : {&read_requests_, &write_requests_, &absent_rows_, &device_reads_,
                  &device_writes_, &bytes_read_, &bytes_written_}) {
    c->store(0, std::memory_order_relaxed);
  }
}

IoTicket SyncTickets::Add(Status s) {
  const IoTicket t = next_++;
  done_.emplace(t, std::move(s));
  return t;
}

Status SyncTickets::Take(IoTicket t) {
  auto it = done_.find(t);
  if (it == done_.end()) {
    return InvalidArgument("Wait on unknown ticket " + std::to_string(t) +
                           " (never issued, or already waited on)");
  }
  Status s = std::move(it->second);
  done_.erase(it);
  return s;
}

}  // namespace internal
}  // namespace foresight::storage
