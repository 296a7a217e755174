// EmbeddingTable: plans through cache::CachePlanner and executes each plan
// on the row store synchronously: write-backs, then fetches into slots and
// bypass rows into the region after the slots, so one tensor holds every
// row a batch may touch and the kernels address it with local ids.
#include "foresight/embed/embedding_table.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>

#include "foresight/core/thread_pool.h"

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

EmbeddingTable::~EmbeddingTable() = default;

float EmbeddingTable::ScaleOf(int64_t key) const {
  return options_.init_scale_of_key ? options_.init_scale_of_key(key) : InitScale(options_.init, options_.rows);
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
      for (int64_t r = r0; r < r1; ++r) InitializeRow(options_.init.seed, ScaleOf(r), layout_, r, base + r * rb);
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
    if (so.create && store_->num_rows() >= 0) FS_RETURN_IF_ERROR(InitializeDenseRows());
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
      InitializeRow(options_.init.seed, ScaleOf(r), layout_, r, row);
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
  const int64_t slots = planner_->num_slots();
  if (arena_.size(0) >= slots + rows) return Status::OK();
  const int64_t old_bypass = arena_.size(0) - slots;
  Tensor grown = Tensor::Empty({slots + std::max(rows, 2 * old_bypass), layout_.row_width()}, layout_.dtype);
  std::memcpy(grown.raw_data(), arena_.raw_data(), static_cast<size_t>(slots * layout_.row_bytes()));
  arena_ = grown;
  return Status::OK();
}

Status EmbeddingTable::ReadOrInitialize(const std::vector<storage::RowRequest>& reqs) {
  if (reqs.empty()) return Status::OK();
  std::vector<uint8_t> absent(reqs.size(), 0);
  FS_RETURN_IF_ERROR(store_->Read(reqs, absent.data()));
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (absent[i]) InitializeRow(options_.init.seed, ScaleOf(reqs[i].key), layout_, reqs[i].key, reqs[i].data);
  }
  return Status::OK();
}

StatusOr<RowBatch> EmbeddingTable::Acquire() {
  if (out_) return FailedPrecondition("EmbeddingTable::Acquire: batch " + std::to_string(plan_.seq) + " is still out (Release it first)");
  if (pending_.empty()) return FailedPrecondition("EmbeddingTable::Acquire: no batch enqueued");
  RowBatch batch;
  if (direct_) {
    current_ = std::move(pending_.front());
    pending_.pop_front();
    plan_ = cache::BatchPlan();
    plan_.seq = next_direct_seq_++;
    batch.seq = plan_.seq;
    batch.rows = direct_rows_;
    batch.local_ids = Tensor::Empty({static_cast<int64_t>(current_.inverse.size())}, DType::kI64);
    int64_t* local = batch.local_ids.data<int64_t>();
    for (size_t i = 0; i < current_.inverse.size(); ++i) local[i] = current_.keys[current_.inverse[i]];
    batch.hits = static_cast<int64_t>(current_.keys.size());
    out_ = true;
    return batch;
  }
  if (!planner_->CanPlan()) {
    return FailedPrecondition("EmbeddingTable::Acquire: the lookahead window needs " +
                              std::to_string(planner_->config().lookahead) +
                              " more batches enqueued after this one, or Close()");
  }
  FS_ASSIGN_OR_RETURN(plan_, planner_->PlanNext());
  current_ = std::move(pending_.front());
  pending_.pop_front();
  if (plan_.keys.size() != current_.keys.size()) {
    return Internal("EmbeddingTable: plan of batch " + std::to_string(plan_.seq) + " has " +
                    std::to_string(plan_.keys.size()) + " keys, the batch " + std::to_string(current_.keys.size()));
  }
  // Dirty rows evicted by this plan go down before any read.
  if (!plan_.writebacks.empty()) {
    std::vector<storage::RowRequest> writes;
    writes.reserve(plan_.writebacks.size());
    for (const cache::SlotKey& sk : plan_.writebacks) writes.push_back({sk.key, ArenaRow(sk.slot)});
    FS_RETURN_IF_ERROR(store_->Write(writes));
  }
  FS_RETURN_IF_ERROR(EnsureBypassCapacity(static_cast<int64_t>(plan_.bypass.size())));
  const int64_t slots = planner_->num_slots();
  std::vector<int64_t> local(plan_.keys.size());
  for (size_t i = 0; i < plan_.keys.size(); ++i) local[i] = plan_.location[i];
  std::vector<storage::RowRequest> reads;
  reads.reserve(plan_.fetches.size() + plan_.bypass.size());
  for (const cache::SlotKey& sk : plan_.fetches) reads.push_back({sk.key, ArenaRow(sk.slot)});
  for (size_t j = 0; j < plan_.bypass.size(); ++j) {
    const int64_t i = plan_.bypass[j];
    local[i] = slots + static_cast<int64_t>(j);
    reads.push_back({plan_.keys[i], ArenaRow(local[i])});
  }
  FS_RETURN_IF_ERROR(ReadOrInitialize(reads));
  batch.seq = plan_.seq;
  batch.rows = arena_;
  batch.local_ids = Tensor::Empty({static_cast<int64_t>(current_.inverse.size())}, DType::kI64);
  int64_t* out = batch.local_ids.data<int64_t>();
  for (size_t i = 0; i < current_.inverse.size(); ++i) out[i] = local[current_.inverse[i]];
  batch.hits = plan_.hits;
  batch.misses = plan_.misses;
  out_ = true;
  return batch;
}

Status EmbeddingTable::Release(RowBatch* batch, bool wrote) {
  if (!out_ || batch == nullptr || batch->seq != plan_.seq) {
    return FailedPrecondition("EmbeddingTable::Release: that batch is not the one out");
  }
  if (!direct_) {
    if (wrote && !plan_.bypass.empty()) {
      const int64_t slots = planner_->num_slots();
      std::vector<storage::RowRequest> writes;
      writes.reserve(plan_.bypass.size());
      for (size_t j = 0; j < plan_.bypass.size(); ++j) {
        writes.push_back({plan_.keys[plan_.bypass[j]], ArenaRow(slots + static_cast<int64_t>(j))});
      }
      FS_RETURN_IF_ERROR(store_->Write(writes));
    }
    FS_RETURN_IF_ERROR(planner_->Release(plan_.seq, wrote));
  }
  out_ = false;
  batch->rows = Tensor();
  batch->local_ids = Tensor();
  return Status::OK();
}

Status EmbeddingTable::Flush() {
  if (out_) return FailedPrecondition("EmbeddingTable::Flush: batch " + std::to_string(plan_.seq) + " is still out");
  if (planner_ != nullptr) {
    FS_ASSIGN_OR_RETURN(std::vector<cache::SlotKey> dirty, planner_->TakeDirty());
    std::vector<storage::RowRequest> writes;
    writes.reserve(dirty.size());
    for (const cache::SlotKey& sk : dirty) writes.push_back({sk.key, ArenaRow(sk.slot)});
    if (!writes.empty()) FS_RETURN_IF_ERROR(store_->Write(writes));
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
