// EmbeddingTable: plans through cache::CachePlanner and executes each plan
// on the row store: write-backs, then fetches into slots and bypass rows
// into a region after the slots, so one tensor holds every row a batch may
// touch and the kernels address it with local ids. Without read_ahead the
// I/O runs in Acquire and Release; with it, on an IoWorker, the next
// batch's while the current one computes.
#include "foresight/embed/embedding_table.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "foresight/core/thread_pool.h"
#include "initial_rows_store.h"
#include "io_worker.h"

namespace foresight::embed {

namespace {
constexpr int64_t kInitChunkRows = 4096;  // rows initialised and written per store write
}  // namespace

StatusOr<std::unique_ptr<EmbeddingTable>> EmbeddingTable::Open(const EmbeddingTableOptions& options) {
  kernels::EmbeddingRowLayout layout{options.dim, options.dtype, options.optimizer};
  FS_RETURN_IF_ERROR(kernels::ValidateEmbeddingRowLayout(layout));
  if (options.rows < 0) return InvalidArgument("embedding table: rows must be >= 0, got " + std::to_string(options.rows));
  if (options.rows == 0 && options.store.kind != storage::RowStoreKind::kRocksDb) {
    return InvalidArgument(std::string("embedding table: a dynamic table (rows = 0) needs the rocksdb store, not ") +
                           storage::RowStoreKindName(options.store.kind));
  }
  std::unique_ptr<EmbeddingTable> table(new EmbeddingTable(options, layout));
  FS_RETURN_IF_ERROR(table->Init());
  return table;
}

EmbeddingTable::EmbeddingTable(const EmbeddingTableOptions& options, const kernels::EmbeddingRowLayout& layout)
    : options_(options), layout_(layout) {}

EmbeddingTable::~EmbeddingTable() = default;

float EmbeddingTable::ScaleOf(int64_t key) const {
  return options_.init_scale_of_key ? options_.init_scale_of_key(key) : InitScale(options_.init, options_.rows);
}

int64_t EmbeddingTable::InitKeyOf(int64_t key) const {
  return options_.init_key_of_key ? options_.init_key_of_key(key) : key;
}

Status EmbeddingTable::Init() {
  storage::RowStoreOptions so = options_.store;
  so.writable = true;
  so.dtype = layout_.dtype;
  so.row_width = layout_.row_width();
  so.rows = options_.rows;
  const bool dense = options_.rows > 0;
  if (so.kind == storage::RowStoreKind::kMemory && so.create && so.path.empty()) {
    // A fresh in-memory table: initialise the tensor, then wrap it.
    Tensor rows = Tensor::Empty({options_.rows, layout_.row_width()}, layout_.dtype);
    uint8_t* base = static_cast<uint8_t*>(rows.raw_data());
    const int64_t rb = layout_.row_bytes();
    DefaultThreadPool()->ParallelFor(options_.rows, kInitChunkRows, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        InitializeRow(options_.init.seed, ScaleOf(r), layout_, InitKeyOf(r), base + r * rb);
      }
    });
    FS_ASSIGN_OR_RETURN(store_, storage::MemoryRowStore(rows, /*writable=*/true));
  } else {
    FS_ASSIGN_OR_RETURN(store_, storage::OpenRowStore(so));
    if (store_->dtype() != layout_.dtype || store_->row_width() != layout_.row_width()) {
      return InvalidArgument("embedding table " + so.path + ": the store holds rows of " +
                             std::to_string(store_->row_width()) + " " + DTypeName(store_->dtype()) +
                             " but the table needs " + std::to_string(layout_.row_width()) + " " +
                             DTypeName(layout_.dtype) + " (dim " + std::to_string(layout_.dim) + " with " +
                             kernels::SparseOptimizerName(layout_.optimizer) + " state)");
    }
    if (dense && store_->num_rows() >= 0 && store_->num_rows() != options_.rows) {
      return InvalidArgument("embedding table " + so.path + ": the store holds " +
                             std::to_string(store_->num_rows()) + " rows, expected " + std::to_string(options_.rows));
    }
    if (so.create && store_->num_rows() >= 0) {
      FS_RETURN_IF_ERROR(InitializeDenseRows());
      // Every row now holds its initial value: a row not written since is
      // computed, never read (a stored row reader such as mmap's host_rows
      // would bypass the record of what was written).
      if (!store_->host_rows().defined()) {
        store_ = std::make_unique<internal::InitialRowsStore>(std::move(store_), [this](int64_t key, void* row) {
          InitializeRow(options_.init.seed, ScaleOf(key), layout_, InitKeyOf(key), row);
        });
      }
    }
  }
  const Tensor host = store_->host_rows();
  if (options_.cache.capacity_bytes == 0 && host.defined() && dense) {
    direct_ = true;
    direct_rows_ = host;
    return Status::OK();
  }
  cache::CacheConfig cc = options_.cache;
  cc.row_bytes = layout_.row_bytes();
  cc.writable = true;
  cc.key_space = dense ? options_.rows : 0;
  FS_ASSIGN_OR_RETURN(planner_, cache::CachePlanner::Create(cc));
  arena_ = Tensor::Zeros({planner_->num_slots(), layout_.row_width()}, layout_.dtype);
  if (options_.read_ahead) io_ = std::make_unique<internal::IoWorker>();
  return Status::OK();
}

Status EmbeddingTable::InitializeDenseRows() {
  const int64_t rb = layout_.row_bytes();
  std::vector<uint8_t> buf(static_cast<size_t>(kInitChunkRows * rb));
  for (int64_t r0 = 0; r0 < options_.rows; r0 += kInitChunkRows) {
    const int64_t r1 = std::min(options_.rows, r0 + kInitChunkRows);
    std::vector<storage::RowRequest> reqs;
    reqs.reserve(static_cast<size_t>(r1 - r0));
    for (int64_t r = r0; r < r1; ++r) {
      uint8_t* row = buf.data() + (r - r0) * rb;
      InitializeRow(options_.init.seed, ScaleOf(r), layout_, InitKeyOf(r), row);
      reqs.push_back({r, row});
    }
    FS_RETURN_IF_ERROR(store_->Write(reqs));
  }
  return store_->Flush();
}

Status EmbeddingTable::Enqueue(const Tensor& ids) {
  FS_RETURN_IF_ERROR(CheckDefined(ids, "EmbeddingTable::Enqueue: ids"));
  if ((ids.dtype() != DType::kI32 && ids.dtype() != DType::kI64) || ids.dim() != 1 || !ids.is_contiguous() ||
      !ids.device().is_cpu()) {
    return InvalidArgument("EmbeddingTable::Enqueue: ids must be a contiguous 1-D i32 or i64 host tensor, got " +
                           ids.ToString());
  }
  std::vector<int64_t> keys(static_cast<size_t>(ids.size(0)));
  for (int64_t i = 0; i < ids.size(0); ++i) {
    keys[i] = ids.dtype() == DType::kI32 ? ids.data<int32_t>()[i] : ids.data<int64_t>()[i];
  }
  return Enqueue(std::move(keys));
}

Status EmbeddingTable::Enqueue(std::vector<int64_t> keys) {
  Pending p;
  p.inverse.resize(keys.size());
  std::unordered_map<int64_t, int64_t> index;
  index.reserve(keys.size() * 2);
  for (size_t i = 0; i < keys.size(); ++i) {
    const int64_t k = keys[i];
    if (options_.rows > 0 ? (k < 0 || k >= options_.rows) : k == INT64_MIN) {
      return OutOfRange("EmbeddingTable::Enqueue: key " + std::to_string(k) + " at position " + std::to_string(i) +
                        (options_.rows > 0 ? " is out of the table's range [0, " + std::to_string(options_.rows) + ")"
                                           : " is reserved"));
    }
    auto [it, inserted] = index.emplace(k, static_cast<int64_t>(p.keys.size()));
    if (inserted) p.keys.push_back(k);
    p.inverse[i] = it->second;
  }
  if (planner_ != nullptr) FS_RETURN_IF_ERROR(planner_->Submit(p.keys));
  pending_.push_back(std::move(p));
  return Status::OK();
}

Status EmbeddingTable::SetStaticKeys(std::vector<int64_t> keys) {
  if (planner_ == nullptr) {
    return FailedPrecondition("EmbeddingTable::SetStaticKeys: the table has no cache (direct mode)");
  }
  return planner_->SetStaticKeys(std::move(keys));
}

void EmbeddingTable::Close() {
  if (planner_ != nullptr) planner_->Close();
}

uint8_t* EmbeddingTable::ArenaRow(int64_t row) const {
  return static_cast<uint8_t*>(arena_.raw_data()) + row * layout_.row_bytes();
}

Status EmbeddingTable::EnsureBypassCapacity(int64_t rows) {
  if (bypass_capacity_ >= rows) return Status::OK();
  const int64_t slots = planner_->num_slots();
  const int64_t capacity = std::max(rows, 2 * bypass_capacity_);
  const int64_t regions = options_.read_ahead ? 2 : 1;
  Tensor grown = Tensor::Empty({slots + regions * capacity, layout_.row_width()}, layout_.dtype);
  std::memcpy(grown.raw_data(), arena_.raw_data(), static_cast<size_t>(slots * layout_.row_bytes()));
  arena_ = grown;
  bypass_capacity_ = capacity;
  return Status::OK();
}

StatusOr<int64_t> EmbeddingTable::RunIo(std::function<Status()> job) {
  if (io_ != nullptr) return io_->Post(std::move(job));
  FS_RETURN_IF_ERROR(job());
  return int64_t{0};
}

Status EmbeddingTable::ReadOrInitialize(const std::vector<storage::RowRequest>& reqs) {
  if (reqs.empty()) return Status::OK();
  std::vector<uint8_t> absent(reqs.size(), 0);
  FS_RETURN_IF_ERROR(store_->Read(reqs, absent.data()));
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (!absent[i]) continue;
    InitializeRow(options_.init.seed, ScaleOf(reqs[i].key), layout_, InitKeyOf(reqs[i].key), reqs[i].data);
  }
  return Status::OK();
}

Status EmbeddingTable::Stage(Staged* s, bool ahead) {
  FS_ASSIGN_OR_RETURN(s->plan, planner_->PlanNext());
  s->pending = std::move(pending_.front());
  pending_.pop_front();
  s->issued = false;
  s->ticket = 0;
  s->deferred.clear();
  if (s->plan.keys.size() != s->pending.keys.size()) {
    return Internal("EmbeddingTable: plan of batch " + std::to_string(s->plan.seq) + " has " +
                    std::to_string(s->plan.keys.size()) + " keys, the batch " +
                    std::to_string(s->pending.keys.size()));
  }
  const int64_t bypass = static_cast<int64_t>(s->plan.bypass.size());
  if (bypass > bypass_capacity_) {
    if (ahead) return Status::OK();  // the arena cannot grow under the batch out: Acquire issues it
    if (io_ != nullptr) FS_RETURN_IF_ERROR(io_->Drain());
    FS_RETURN_IF_ERROR(EnsureBypassCapacity(bypass));
  }
  return Issue(s, ahead);
}

Status EmbeddingTable::Issue(Staged* s, bool ahead) {
  const cache::BatchPlan& plan = s->plan;
  const int64_t slots = planner_->num_slots();
  const int64_t region = slots + (options_.read_ahead ? (plan.seq & 1) : 0) * bypass_capacity_;
  s->local.assign(plan.location.begin(), plan.location.end());
  // Dirty rows evicted by this plan go down before any read. Their slots
  // are pinned by no batch, so the batch out does not touch them.
  std::vector<storage::RowRequest> writes;
  writes.reserve(plan.writebacks.size());
  for (const cache::SlotKey& sk : plan.writebacks) writes.push_back({sk.key, ArenaRow(sk.slot)});
  std::vector<storage::RowRequest> reads;
  reads.reserve(plan.fetches.size() + plan.bypass.size());
  for (const cache::SlotKey& sk : plan.fetches) reads.push_back({sk.key, ArenaRow(sk.slot)});
  for (size_t j = 0; j < plan.bypass.size(); ++j) {
    const int64_t i = plan.bypass[j];
    s->local[i] = region + static_cast<int64_t>(j);
    reads.push_back({plan.keys[i], ArenaRow(s->local[i])});
  }
  // Read-after-write: a row the batch out holds as a bypass row is written
  // by its Release; read it after that (Release posts s->deferred).
  if (ahead && !current_.plan.bypass.empty()) {
    std::unordered_set<int64_t> out_bypass;
    for (const int64_t i : current_.plan.bypass) out_bypass.insert(current_.plan.keys[i]);
    std::vector<storage::RowRequest> now;
    now.reserve(reads.size());
    for (const storage::RowRequest& r : reads) (out_bypass.count(r.key) ? s->deferred : now).push_back(r);
    reads = std::move(now);
  }
  s->issued = true;
  FS_ASSIGN_OR_RETURN(s->ticket, RunIo([this, writes = std::move(writes), reads = std::move(reads)]() -> Status {
                        if (!writes.empty()) FS_RETURN_IF_ERROR(store_->Write(writes));
                        return ReadOrInitialize(reads);
                      }));
  return Status::OK();
}

StatusOr<RowBatch> EmbeddingTable::Acquire() {
  if (out_) return FailedPrecondition("EmbeddingTable::Acquire: batch " + std::to_string(current_.plan.seq) + " is still out (Release it first)");
  RowBatch batch;
  if (direct_) {
    if (pending_.empty()) return FailedPrecondition("EmbeddingTable::Acquire: no batch enqueued");
    current_.pending = std::move(pending_.front());
    pending_.pop_front();
    current_.plan = cache::BatchPlan();
    current_.plan.seq = next_direct_seq_++;
    const Pending& p = current_.pending;
    batch.seq = current_.plan.seq;
    batch.rows = direct_rows_;
    batch.local_ids = Tensor::Empty({static_cast<int64_t>(p.inverse.size())}, DType::kI64);
    int64_t* local = batch.local_ids.data<int64_t>();
    for (size_t i = 0; i < p.inverse.size(); ++i) local[i] = p.keys[p.inverse[i]];
    batch.hits = static_cast<int64_t>(p.keys.size());
    out_ = true;
    return batch;
  }
  if (next_ != nullptr) {
    current_ = std::move(*next_);
    next_.reset();
    if (!current_.issued) {
      // It needed more bypass room than the arena had while a batch was out.
      FS_RETURN_IF_ERROR(io_->Drain());
      FS_RETURN_IF_ERROR(EnsureBypassCapacity(static_cast<int64_t>(current_.plan.bypass.size())));
      FS_RETURN_IF_ERROR(Issue(&current_, /*ahead=*/false));
    }
  } else {
    if (pending_.empty()) return FailedPrecondition("EmbeddingTable::Acquire: no batch enqueued");
    if (!planner_->CanPlan()) {
      return FailedPrecondition("EmbeddingTable::Acquire: the lookahead window needs " +
                                std::to_string(planner_->config().lookahead) +
                                " more batches enqueued after this one, or Close()");
    }
    FS_RETURN_IF_ERROR(Stage(&current_, /*ahead=*/false));
  }
  if (io_ != nullptr) FS_RETURN_IF_ERROR(io_->Wait(current_.ticket));
  const Pending& p = current_.pending;
  batch.seq = current_.plan.seq;
  batch.rows = arena_;
  batch.local_ids = Tensor::Empty({static_cast<int64_t>(p.inverse.size())}, DType::kI64);
  int64_t* out = batch.local_ids.data<int64_t>();
  for (size_t i = 0; i < p.inverse.size(); ++i) out[i] = current_.local[p.inverse[i]];
  batch.hits = current_.plan.hits;
  batch.misses = current_.plan.misses;
  out_ = true;
  // The next batch's plan and I/O, while this one computes.
  if (io_ != nullptr && !pending_.empty() && planner_->CanPlan()) {
    next_ = std::make_unique<Staged>();
    FS_RETURN_IF_ERROR(Stage(next_.get(), /*ahead=*/true));
  }
  return batch;
}

Status EmbeddingTable::Release(RowBatch* batch, bool wrote) {
  if (!out_ || batch == nullptr || batch->seq != current_.plan.seq) {
    return FailedPrecondition("EmbeddingTable::Release: that batch is not the one out");
  }
  if (!direct_) {
    const cache::BatchPlan& plan = current_.plan;
    if (wrote && !plan.bypass.empty()) {
      std::vector<storage::RowRequest> writes;
      writes.reserve(plan.bypass.size());
      for (size_t j = 0; j < plan.bypass.size(); ++j) {
        writes.push_back({plan.keys[plan.bypass[j]], ArenaRow(current_.local[plan.bypass[j]])});
      }
      FS_RETURN_IF_ERROR(RunIo([this, writes = std::move(writes)] { return store_->Write(writes); }).status());
    }
    if (next_ != nullptr && next_->issued && !next_->deferred.empty()) {
      FS_ASSIGN_OR_RETURN(next_->ticket, RunIo([this, reads = std::move(next_->deferred)] {
                            return ReadOrInitialize(reads);
                          }));
      next_->deferred.clear();
    }
    FS_RETURN_IF_ERROR(planner_->Release(plan.seq, wrote));
  }
  out_ = false;
  batch->rows = Tensor();
  batch->local_ids = Tensor();
  return Status::OK();
}

Status EmbeddingTable::Flush() {
  if (out_) return FailedPrecondition("EmbeddingTable::Flush: batch " + std::to_string(current_.plan.seq) + " is still out");
  if (planner_ != nullptr) {
    // A batch read ahead whose I/O waited for bypass room has dirty rows
    // evicted but not yet written back: start it now (nothing is out).
    if (next_ != nullptr && !next_->issued) {
      FS_RETURN_IF_ERROR(io_->Drain());
      FS_RETURN_IF_ERROR(EnsureBypassCapacity(static_cast<int64_t>(next_->plan.bypass.size())));
      FS_RETURN_IF_ERROR(Issue(next_.get(), /*ahead=*/false));
    }
    // The worker is idle after this, so the store is this thread's.
    if (io_ != nullptr) FS_RETURN_IF_ERROR(io_->Drain());
    // A batch read ahead is in flight but has not computed: its rows are
    // current, and flushing them is right.
    FS_ASSIGN_OR_RETURN(std::vector<cache::SlotKey> dirty, planner_->TakeDirty(/*unwritten_in_flight=*/next_ != nullptr));
    // Written in chunks of consecutive keys: a store's submission keeps
    // per-request state (the disk store about 80 bytes a row), which for
    // every slot of a large cache would be a spike of its own beside the
    // slots; in key order a chunk still merges neighbouring rows into one
    // extent as a single submission would.
    constexpr size_t kFlushChunk = 65536;
    std::sort(dirty.begin(), dirty.end(),
              [](const cache::SlotKey& a, const cache::SlotKey& b) { return a.key < b.key; });
    std::vector<storage::RowRequest> writes;
    for (size_t b = 0; b < dirty.size(); b += kFlushChunk) {
      writes.clear();
      for (size_t i = b; i < std::min(dirty.size(), b + kFlushChunk); ++i) {
        writes.push_back({dirty[i].key, ArenaRow(dirty[i].slot)});
      }
      FS_RETURN_IF_ERROR(store_->Write(writes));
    }
  }
  return store_->Flush();
}

Status EmbeddingTable::ReadRows(const std::vector<int64_t>& keys, void* out) {
  FS_RETURN_IF_ERROR(Flush());
  const int64_t rb = layout_.row_bytes();
  std::vector<storage::RowRequest> reqs;
  reqs.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (options_.rows > 0 && (keys[i] < 0 || keys[i] >= options_.rows)) {
      return OutOfRange("EmbeddingTable::ReadRows: key " + std::to_string(keys[i]) + " at position " +
                        std::to_string(i) + " is out of the table's range [0, " + std::to_string(options_.rows) + ")");
    }
    reqs.push_back({keys[i], static_cast<uint8_t*>(out) + static_cast<int64_t>(i) * rb});
  }
  return ReadOrInitialize(reqs);
}

}  // namespace foresight::embed
