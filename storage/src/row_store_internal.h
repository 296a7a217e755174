// Pieces shared by the RowStore backends: the per-backend factories that
// OpenRowStore dispatches to, request validation, dense .npy file checks and
// creation, and the ticket book of stores that complete synchronously.
// Private to the storage module.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/storage/npy.h"
#include "foresight/storage/row_store.h"

namespace foresight::storage::internal {

StatusOr<std::unique_ptr<RowStore>> OpenMemoryRowStore(const RowStoreOptions& options);
StatusOr<std::unique_ptr<RowStore>> OpenMmapRowStore(const RowStoreOptions& options);
StatusOr<std::unique_ptr<RowStore>> OpenDiskRowStore(const RowStoreOptions& options);
StatusOr<std::unique_ptr<RowStore>> OpenRocksDbRowStore(const RowStoreOptions& options);

// OutOfRange naming the first key outside [0, num_rows) and its position.
Status CheckDenseKeys(const std::vector<RowRequest>& reqs, int64_t num_rows, const char* what);
// InvalidArgument when a request has a null buffer (names the position).
Status CheckBuffers(const std::vector<RowRequest>& reqs);

// Opens the header of a dense store's 2-D .npy file and checks it against
// the options (dtype and row_width when row_width > 0). With
// options.create, a missing file is first created (CreateDenseNpy).
// Messages name the path: missing file, a directory, wrong rank or layout.
StatusOr<NpyInfo> PrepareDenseFile(const RowStoreOptions& options);
// Creates `path` as a zero-filled .npy of rows x row_width of dtype with its
// data at a 4096-byte boundary (temporary file + fsync + rename).
Status CreateDenseNpy(const std::string& path, DType dtype, int64_t rows, int64_t row_width);

// Copies rows between a contiguous row array and the callers' buffers,
// spread over the default ThreadPool when the batch is large.
void CopyRowsOut(const char* base, size_t row_bytes, const std::vector<RowRequest>& reqs);
void CopyRowsIn(char* base, size_t row_bytes, const std::vector<RowRequest>& reqs);

// Counters that the owning thread bumps and any thread may read.
class AtomicStats {
 public:
  void AddRead(int64_t rows, int64_t ops, int64_t bytes) {
    read_requests_.fetch_add(rows, std::memory_order_relaxed);
    device_reads_.fetch_add(ops, std::memory_order_relaxed);
    bytes_read_.fetch_add(bytes, std::memory_order_relaxed);
  }
  void AddWrite(int64_t rows, int64_t ops, int64_t bytes) {
    write_requests_.fetch_add(rows, std::memory_order_relaxed);
    device_writes_.fetch_add(ops, std::memory_order_relaxed);
    bytes_written_.fetch_add(bytes, std::memory_order_relaxed);
  }
  void AddAbsent(int64_t rows) { absent_rows_.fetch_add(rows, std::memory_order_relaxed); }
  RowStoreStats Snapshot() const;
  void Reset();

 private:
  std::atomic<int64_t> read_requests_{0}, write_requests_{0}, absent_rows_{0};
  std::atomic<int64_t> device_reads_{0}, device_writes_{0}, bytes_read_{0}, bytes_written_{0};
};

// Tickets of a store whose submissions complete inside Submit*: each maps
// to its final status until Wait collects it.
class SyncTickets {
 public:
  IoTicket Add(Status s);
  // The status of `t` (removing it); InvalidArgument for an unknown ticket.
  Status Take(IoTicket t);

 private:
  IoTicket next_ = 1;
  std::unordered_map<IoTicket, Status> done_;
};

}  // namespace foresight::storage::internal
