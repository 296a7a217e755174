// RowStore: fixed-width rows addressed by 64-bit keys, read and written in
// asynchronous batches into caller buffers. It is the one interface the
// cache, the pipeline's read and write-back stages, layer-wise inference
// and (next) the DLRM embedding tables use for node features, hidden
// layers and embedding rows, whatever the backend:
//
//   memory   rows in a host tensor (owned, or a view)
//   mmap     a .npy file mapped read-only (or read-write); pages count as RSS
//   disk     a 2-D .npy file read with O_DIRECT on io_uring: aligned
//            extents, neighbouring rows coalesced into one request, up to
//            io_depth requests in flight; pread when the kernel refuses
//            io_uring (logged once). Page cache is bypassed, so reads cost
//            no RSS beyond the caller's buffers and a bounded bounce pool
//            (io_depth x max(max_coalesce_bytes, one row's blocks)). Writes
//            of partial blocks are read-modify-write; the file's unaligned
//            last block is written through the page cache, so the .npy
//            never grows.
//   rocksdb  sparse keys, rows as values (MultiGet / WriteBatch); a key
//            never written is reported "absent" so the caller can
//            initialise the row (embedding tables create rows on touch).
//
// Usage: t = SubmitRead(reqs) ... Wait(t). Buffers named by a request must
// stay valid, and must not be touched by the caller, until Wait(t)
// returns. Requests of one submission may complete in any order (a key
// written twice in one submission ends with either value); two
// submissions touching the same key complete in submission order for a
// key (a read submitted after a write of the same key sees the write).
//
// Thread safety: Submit*/Wait/Flush are called from one thread at a time
// (the stage that owns the store); stats() may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/dtype.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"

namespace foresight::storage {

// One row to move: `key` and the caller's buffer of row_bytes() bytes
// (any alignment; backends that need alignment bounce through their own).
struct RowRequest {
  int64_t key = 0;
  void* data = nullptr;  // destination of a read, source of a write
};

// Cumulative counters since open (ResetStats zeroes them). Device bytes
// are after alignment and coalescing: what the file system or the database
// actually moved, e.g. a 512-byte row read with O_DIRECT costs 4096 bytes.
struct RowStoreStats {
  int64_t read_requests = 0;   // rows asked for by SubmitRead
  int64_t write_requests = 0;  // rows given to SubmitWrite
  int64_t absent_rows = 0;     // reads that found no row (rocksdb)
  // Reads answered from the rows' known initial values with no I/O (an
  // embedding table's rows never written since it was created).
  int64_t rows_initialized = 0;
  int64_t device_reads = 0;    // I/O operations issued (after coalescing)
  int64_t device_writes = 0;
  int64_t bytes_read = 0;      // device bytes after alignment
  int64_t bytes_written = 0;
};

// A handle for one submission; Wait on it exactly once.
using IoTicket = uint64_t;

class RowStore {
 public:
  virtual ~RowStore() = default;

  // Row layout: row_width elements of dtype, row_bytes() bytes.
  DType dtype() const { return dtype_; }
  int64_t row_width() const { return row_width_; }
  int64_t row_bytes() const { return row_width_ * DTypeSize(dtype_); }
  // Keys are in [0, num_rows()) for dense stores; -1 for sparse ones
  // (rocksdb), whose keys are any int64.
  virtual int64_t num_rows() const = 0;
  virtual bool writable() const = 0;
  // "memory", "mmap", "disk (io_uring)", "disk (pread)", "disk (buffered,
  // io_uring)", "disk (buffered, pread)", "rocksdb".
  virtual std::string backend() const = 0;

  // Queues reads of reqs[i].key into reqs[i].data. `absent`, when not null,
  // has reqs.size() bytes: absent[i] is set to 1 when the key has no row
  // (its buffer untouched) and to 0 otherwise (dense stores: always 0);
  // like the rows, read it after Wait. With absent == nullptr an
  // absent row is a NotFound error from Wait. A key outside [0, num_rows())
  // of a dense store fails the submission (OutOfRange naming the key and
  // its position) before anything is queued.
  virtual StatusOr<IoTicket> SubmitRead(const std::vector<RowRequest>& reqs, uint8_t* absent) = 0;
  // Queues writes of reqs[i].data as row reqs[i].key (creating it in a
  // sparse store). FailedPrecondition on a read-only store.
  virtual StatusOr<IoTicket> SubmitWrite(const std::vector<RowRequest>& reqs) = 0;
  // Blocks (passively) until every request of `ticket` is done; returns its
  // first error (e.g. a short read naming the file and offset: a truncated
  // file). After an error the store stays usable for other tickets.
  virtual Status Wait(IoTicket ticket) = 0;
  // Makes completed writes durable (fsync / WAL sync) and waits for all
  // outstanding tickets' I/O.
  virtual Status Flush() = 0;

  // Blocking conveniences: SubmitRead + Wait.
  Status Read(const std::vector<RowRequest>& reqs, uint8_t* absent = nullptr);
  Status Write(const std::vector<RowRequest>& reqs);

  virtual RowStoreStats stats() const = 0;
  virtual void ResetStats() = 0;

  // Rows per block of this backend's writes when rows tile its blocks
  // exactly and a write must read a block it does not cover whole (the
  // disk store with O_DIRECT: read-modify-write): row k lies in block
  // k / write_block_rows(), and a submission holding every row of a block
  // writes it without reading it. 0 when no write reads (memory, rocksdb)
  // or rows do not tile the blocks.
  virtual int64_t write_block_rows() const { return 0; }

  // The rows as one [num_rows, row_width] host tensor when this backend
  // keeps them addressable in this process (memory, mmap), so a reader may
  // gather them directly instead of going through SubmitRead; undefined
  // otherwise. The view keeps the memory alive. Reads through it bypass
  // the counters and must not race a write.
  virtual Tensor host_rows() const { return Tensor(); }

 protected:
  RowStore(DType dtype, int64_t row_width) : dtype_(dtype), row_width_(row_width) {}

 private:
  DType dtype_;
  int64_t row_width_;
};

enum class RowStoreKind { kMemory, kMmap, kDisk, kRocksDb };
// Parses "memory", "mmap", "disk", "rocksdb" (the --feature-store values
// and "rocksdb"); InvalidArgument naming the accepted values otherwise.
StatusOr<RowStoreKind> ParseRowStoreKind(const std::string& name);
const char* RowStoreKindName(RowStoreKind kind);

struct RowStoreOptions {
  RowStoreKind kind = RowStoreKind::kMemory;
  // memory / mmap / disk: a 2-D .npy file (rows = first dimension); its
  // header is validated (dtype, shape, file size: a truncated file is an
  // error naming the file, expected and actual sizes). For memory the file
  // is loaded into an owned host tensor (writes change that copy, never the
  // file); a memory store with no path and create=true is a zero-filled
  // table of rows x row_width. rocksdb: the database directory.
  std::string path;
  bool writable = false;
  // Create the file / database when missing (memory / mmap / disk: a .npy
  // of `rows` x `row_width` of `dtype`, zero-filled, data 4096-aligned;
  // rocksdb: an empty database recording dtype and row_width). Needs
  // writable. Otherwise, and for an existing file, dtype/row_width are
  // taken from the file, and must match when given (row_width > 0).
  bool create = false;
  DType dtype = DType::kF32;
  int64_t row_width = 0;
  int64_t rows = 0;
  // disk: io_uring queue depth (requests in flight, 1..4096) and the
  // largest coalesced request (0: no coalescing, one request per row).
  // O_DIRECT alignment is the file's direct-I/O alignment (statx) rounded
  // up to 4096. A file system that refuses O_DIRECT (tmpfs on older
  // kernels) is a FailedPrecondition naming the file and suggesting
  // --feature-store mmap; nothing falls back to buffered I/O silently.
  int io_depth = 64;
  int64_t max_coalesce_bytes = 256 << 10;
  // disk: reads of one submission whose aligned spans lie at most this many
  // bytes apart join one request (within max_coalesce_bytes), the gap read
  // and dropped: this disk serves ~100k ops a second whatever their size up
  // to 4 KiB, so on sparse, clustered keys (partition order) fewer, longer
  // reads finish sooner. 0: only touching spans join. Writes ignore it.
  int64_t max_read_gap_bytes = 0;
  // disk: force the pread path (tests; also chosen when io_uring is refused).
  bool force_pread = false;
  // disk: O_DIRECT (the default: page cache bypassed, no hidden memory use,
  // reads aligned). false = buffered I/O through the page cache, for
  // scratch files the process writes and soon reads back (layer-wise
  // inference's hidden layers): same batching and coalescing, rows need no
  // alignment, and the page cache is the kernel's (reclaimable), not RSS.
  bool direct_io = true;
};

StatusOr<std::unique_ptr<RowStore>> OpenRowStore(const RowStoreOptions& options);

// A memory store over an existing host tensor (2-D, contiguous; a view is
// kept, so `rows` must outlive nothing: the tensor's storage is shared).
StatusOr<std::unique_ptr<RowStore>> MemoryRowStore(Tensor rows, bool writable);

}  // namespace foresight::storage
