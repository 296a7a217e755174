// The memory backend: rows in a host tensor (a loaded .npy, a zero-filled
// new table, or the caller's tensor), and HostRowStore, which mmap shares.
#include <cstring>

#include "foresight/storage/npy.h"
#include "host_row_store.h"

namespace foresight::storage {
namespace internal {

HostRowStore::HostRowStore(std::string backend, std::string name, DType dtype,
                           int64_t row_width, char* base, int64_t num_rows, bool writable,
                           std::shared_ptr<void> owner, std::function<Status()> flush)
    : RowStore(dtype, row_width),
      backend_(std::move(backend)),
      name_(std::move(name)),
      base_(base),
      num_rows_(num_rows),
      writable_(writable),
      owner_(std::move(owner)),
      flush_(std::move(flush)) {}

StatusOr<IoTicket> HostRowStore::SubmitRead(const std::vector<RowRequest>& reqs,
                                            uint8_t* absent) {
  FS_RETURN_IF_ERROR(CheckDenseKeys(reqs, num_rows_, (name_ + ": read").c_str()));
  FS_RETURN_IF_ERROR(CheckBuffers(reqs));
  if (absent != nullptr && !reqs.empty()) std::memset(absent, 0, reqs.size());
  const size_t rb = static_cast<size_t>(row_bytes());
  CopyRowsOut(base_, rb, reqs);
  const int64_t n = static_cast<int64_t>(reqs.size());
  stats_.AddRead(n, 0, n * static_cast<int64_t>(rb));
  return tickets_.Add(Status::OK());
}

StatusOr<IoTicket> HostRowStore::SubmitWrite(const std::vector<RowRequest>& reqs) {
  if (!writable_) {
    return FailedPrecondition(name_ + ": the " + backend_ + " row store is read-only");
  }
  FS_RETURN_IF_ERROR(CheckDenseKeys(reqs, num_rows_, (name_ + ": write").c_str()));
  FS_RETURN_IF_ERROR(CheckBuffers(reqs));
  const size_t rb = static_cast<size_t>(row_bytes());
  CopyRowsIn(base_, rb, reqs);
  const int64_t n = static_cast<int64_t>(reqs.size());
  stats_.AddWrite(n, 0, n * static_cast<int64_t>(rb));
  return tickets_.Add(Status::OK());
}

namespace {

StatusOr<std::unique_ptr<RowStore>> MakeMemoryStore(Tensor rows, bool writable,
                                                    std::string name) {
  FS_RETURN_IF_ERROR(CheckDefined(rows, "memory row store tensor"));
  FS_RETURN_IF_ERROR(CheckDim(rows, 2, "memory row store tensor"));
  FS_RETURN_IF_ERROR(CheckContiguous(rows, "memory row store tensor"));
  if (!rows.device().is_cpu()) {
    return InvalidArgument("memory row store needs a host tensor, got " + rows.ToString());
  }
  const int64_t num_rows = rows.size(0);
  const int64_t width = rows.size(1);
  const DType dtype = rows.dtype();
  char* base = static_cast<char*>(rows.raw_data());
  // The store holds the Tensor (and so its storage) alive.
  auto owner = std::make_shared<Tensor>(std::move(rows));
  return std::unique_ptr<RowStore>(new HostRowStore("memory", std::move(name), dtype,
                                                    width, base, num_rows, writable,
                                                    std::move(owner), nullptr));
}

}  // namespace

StatusOr<std::unique_ptr<RowStore>> OpenMemoryRowStore(const RowStoreOptions& options) {
  if (options.path.empty()) {
    // A new, zero-filled table held only in memory.
    if (!options.create) {
      return InvalidArgument("memory row store: give a .npy path, or create=true with rows and row_width");
    }
    if (options.rows < 0 || options.row_width <= 0) {
      return InvalidArgument("memory row store: create needs rows >= 0 and row_width > 0, got " +
                             std::to_string(options.rows) + " x " +
                             std::to_string(options.row_width));
    }
    Tensor t = Tensor::Zeros({options.rows, options.row_width}, options.dtype);
    return MakeMemoryStore(std::move(t), options.writable, "memory row store");
  }
  FS_RETURN_IF_ERROR(PrepareDenseFile(options).status());
  FS_ASSIGN_OR_RETURN(Tensor t, LoadNpy(options.path));
  return MakeMemoryStore(std::move(t), options.writable, options.path + " (in memory)");
}

}  // namespace internal

StatusOr<std::unique_ptr<RowStore>> MemoryRowStore(Tensor rows, bool writable) {
  return internal::MakeMemoryStore(std::move(rows), writable, "memory row store");
}

}  // namespace foresight::storage
