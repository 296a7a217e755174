// EmbeddingTable: learnable rows (an embedding of `dim` values, f32 or f16,
// with its sparse optimizer's state beside it in the same row) on any row
// store: memory, mmap, disk (io_uring) or RocksDB, where keys are any int64
// and a row is created on first touch from the seeded initialiser (a
// dynamic vocabulary). Rows are read and written through the lookahead
// cache (cache::CachePlanner) with write-back of dirty rows, so a table far
// larger than RAM trains with a bounded slot array.
//
// Use, batch by batch:
//   Enqueue(ids of batch t + W) ...       the lookahead window (W = the
//                                         cache's lookahead; Close() at the end)
//   RowBatch b = Acquire()                rows of the oldest enqueued batch
//   ... kernels read / update b.rows at b.local_ids ...
//   Release(&b, wrote)                    bypass rows written back, slots unpinned
//   Flush()                               dirty rows written back, store synced
// One batch is acquired at a time (Acquire while one is out is a
// FailedPrecondition). Without read_ahead a batch is planned only after the
// one before it was released; with it (see the option), the next batch is
// planned and read while one is out.
//
// Direct mode: a memory or mmap store with no cache (capacity 0) hands out
// its own rows (local ids = the keys): no planner, no copies.
//
// Determinism: rows, plans and updates depend only on the options and the
// batches, so a table behind a tiny cache ends bit for bit where the same
// table in memory ends.
//
// Thread safety: none; one owner drives it. Kernels given a RowBatch may
// use a thread pool.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "foresight/cache/cache_planner.h"
#include "foresight/embed/initializer.h"
#include "foresight/kernels/ops.h"
#include "foresight/storage/row_store.h"

namespace foresight::embed {

namespace internal {
class IoWorker;
}  // namespace internal

struct EmbeddingTableOptions {
  // Rows of a dense table; 0 for a dynamic one (rocksdb only: keys are any
  // int64 but INT64_MIN).
  int64_t rows = 0;
  int64_t dim = 0;
  DType dtype = DType::kF32;  // f32 or f16 storage. Default: f32
  kernels::SparseOptimizer optimizer = kernels::SparseOptimizer::kSgd;
  EmbeddingInit init;
  // The initialiser's scale per key, when it differs by key (a collection's
  // tables); null: InitScale(init, rows) for every row.
  std::function<float(int64_t key)> init_scale_of_key;
  // The key whose initial values row `key` takes, when it differs (a shard
  // of a table split across ranks starts from the unsplit table's rows);
  // null: the row's own key.
  std::function<int64_t(int64_t key)> init_key_of_key;
  // kind and path (memory needs no path); create = a new table, every row
  // initialised (rocksdb: on first touch); otherwise an existing table (a
  // checkpoint) whose row layout must match. writable is implied; dtype,
  // row_width and rows are set from the fields above.
  storage::RowStoreOptions store;
  // The lookahead cache: policy, capacity_bytes (0: no slots; every row is
  // read around the cache), lookahead (W). row_bytes, writable and
  // key_space are set by the table.
  cache::CacheConfig cache;
  // Read ahead: while a batch is out, plan the next one and run its
  // write-backs and reads on a background thread (which then does all of
  // the store's I/O), so a disk or RocksDB table's I/O overlaps the
  // batch's compute. The overlap needs W + 1 batches enqueued after the one
  // acquired (or Close()); with fewer the next batch is planned at its own
  // Acquire. A read of a row the batch out has as a bypass row waits for
  // that batch's Release (and its write). Rows, and so every update, are
  // the same either way; the plans (and cache counters) differ, since the
  // next batch is planned while the one out still pins its slots. Costs
  // a second bypass region. Default: false
  bool read_ahead = false;
};

// The rows of one batch, valid until Release.
struct RowBatch {
  int64_t seq = -1;
  // [M, row_width] host tensor of the layout's dtype (the cache's slots and
  // this batch's bypass rows, or a direct store's rows); kernels update it
  // in place.
  Tensor rows;
  // i64 [N]: the row in `rows` of each id of the batch, in Enqueue order.
  Tensor local_ids;
  // Rows read from the store (or initialised) for this batch / found in
  // the cache.
  int64_t misses = 0;
  int64_t hits = 0;
};

class EmbeddingTable {
 public:
  static StatusOr<std::unique_ptr<EmbeddingTable>> Open(const EmbeddingTableOptions& options);
  ~EmbeddingTable();
  EmbeddingTable(const EmbeddingTable&) = delete;
  EmbeddingTable& operator=(const EmbeddingTable&) = delete;

  const kernels::EmbeddingRowLayout& layout() const { return layout_; }
  int64_t rows() const { return options_.rows; }
  bool direct() const { return direct_; }
  // Direct mode only: the store's rows [rows, row_width].
  const Tensor& direct_rows() const { return direct_rows_; }

  // The keys of a future batch (i32/i64, any order, repeats allowed). A
  // dense table's key outside [0, rows) is OutOfRange naming its position.
  Status Enqueue(const Tensor& ids);
  Status Enqueue(std::vector<int64_t> keys);
  // No more batches (the last W can then be acquired).
  void Close();
  // The static cache policy's keys by priority (see CachePlanner); before
  // the first Acquire. FailedPrecondition for other policies or direct mode.
  Status SetStaticKeys(std::vector<int64_t> keys);
  // The oldest enqueued batch's rows: write-backs of evicted dirty rows,
  // then fetches and bypass reads (absent rows initialised). FailedPrecondition
  // when a batch is out, none is enqueued, or the window is not full
  // (enqueue W more or Close()).
  StatusOr<RowBatch> Acquire();
  // Ends the batch; with `wrote`, its rows changed: bypass rows are written
  // to the store now and slot rows become dirty.
  Status Release(RowBatch* batch, bool wrote);
  // Writes every dirty row back and makes the store durable.
  Status Flush();
  // Flushes, then reads rows into `out` (keys.size() x row_bytes; no batch
  // may be out): the current rows, never-touched dynamic ones as
  // initialised (a checkpoint or export reads them so).
  Status ReadRows(const std::vector<int64_t>& keys, void* out);

  storage::RowStore* store() const { return store_.get(); }
  // Null in direct mode.
  const cache::CachePlanner* planner() const { return planner_.get(); }
  int64_t num_slots() const { return planner_ != nullptr ? planner_->num_slots() : 0; }

 private:
  EmbeddingTable(const EmbeddingTableOptions& options, const kernels::EmbeddingRowLayout& layout);
  Status Init();
  Status InitializeDenseRows();
  // Room for `rows` bypass rows in each bypass region (one, or two with
  // read_ahead: batches of even and odd seq). Only with no batch out and
  // no I/O pending.
  Status EnsureBypassCapacity(int64_t rows);
  uint8_t* ArenaRow(int64_t row) const;
  // Reads reqs from the store, initialising absent rows in place.
  Status ReadOrInitialize(const std::vector<storage::RowRequest>& reqs);
  float ScaleOf(int64_t key) const;
  int64_t InitKeyOf(int64_t key) const;

  struct Pending {
    std::vector<int64_t> keys;     // distinct, first-occurrence order
    std::vector<int64_t> inverse;  // per id: index into keys
  };
  // A planned batch and its I/O.
  struct Staged {
    cache::BatchPlan plan;
    Pending pending;
    std::vector<int64_t> local;                  // per distinct key: its arena row
    std::vector<storage::RowRequest> deferred;   // reads of the batch out's bypass rows
    bool issued = false;                         // its write-backs and reads were started
    int64_t ticket = 0;                          // the I/O worker's ticket to wait for
  };
  // Plans the next batch into *s and starts its I/O; `ahead`: a batch is
  // out (reads of its bypass keys are deferred; no room for the bypass rows
  // leaves the I/O to Acquire).
  Status Stage(Staged* s, bool ahead);
  Status Issue(Staged* s, bool ahead);
  // Runs `job` on the I/O worker (returns its ticket) or, without one, now.
  StatusOr<int64_t> RunIo(std::function<Status()> job);

  EmbeddingTableOptions options_;
  kernels::EmbeddingRowLayout layout_;
  std::unique_ptr<storage::RowStore> store_;
  std::unique_ptr<cache::CachePlanner> planner_;
  bool direct_ = false;
  Tensor direct_rows_;
  Tensor arena_;  // [num_slots + bypass regions, row_width]
  int64_t bypass_capacity_ = 0;  // rows of each bypass region
  std::deque<Pending> pending_;
  Staged current_;               // the batch out (direct mode: its seq and keys)
  std::unique_ptr<Staged> next_;  // read_ahead: the next batch, planned while one is out
  int64_t next_direct_seq_ = 0;  // direct mode numbers batches itself
  bool out_ = false;
  // read_ahead: runs the store's I/O. Declared last: destroyed (its jobs
  // finished) before the arena and the store.
  std::unique_ptr<internal::IoWorker> io_;
};

}  // namespace foresight::embed
