#include "learned_input.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <cerrno>
#include <cstdlib>

#include "file_ops.h"
#include "foresight/storage/npy.h"
#include "pipeline/pipeline_setup.h"
#include "scratch_rows.h"

namespace foresight::trainer::internal {

namespace {

constexpr char kPrefix[] = "learned:";
constexpr char kFilePrefix[] = "file+";
constexpr int64_t kChunkRows = 65536;  // rows a checkpoint or export moves at once

}  // namespace

bool WithFileFeatures(const std::string& node_features) { return node_features.rfind(kFilePrefix, 0) == 0; }

bool IsLearned(const std::string& node_features) {
  const size_t skip = WithFileFeatures(node_features) ? sizeof(kFilePrefix) - 1 : 0;
  return node_features.compare(skip, sizeof(kPrefix) - 1, kPrefix) == 0;
}

StatusOr<int64_t> ParseLearnedDim(const std::string& node_features) {
  const size_t skip = (WithFileFeatures(node_features) ? sizeof(kFilePrefix) - 1 : 0) + sizeof(kPrefix) - 1;
  const std::string digits = node_features.size() > skip ? node_features.substr(skip) : std::string();
  char* end = nullptr;
  const long long dim = digits.empty() ? 0 : std::strtoll(digits.c_str(), &end, 10);
  if (!IsLearned(node_features) || digits.empty() || end != digits.c_str() + digits.size() || dim < 1 ||
      dim > (int64_t{1} << 20)) {
    return InvalidArgument("node_features: '" + node_features +
                           "' is not learned:DIM or file+learned:DIM with DIM a positive width (e.g. learned:64)");
  }
  return static_cast<int64_t>(dim);
}

Tensor ConcatColumns(const Tensor& a, const Tensor& b) {
  const int64_t n = a.size(0), fa = a.size(1), fb = b.size(1);
  Tensor out = Tensor::Empty({n, fa + fb}, DType::kF32);
  float* o = out.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(o + i * (fa + fb), a.data<float>() + i * fa, static_cast<size_t>(fa) * sizeof(float));
    std::memcpy(o + i * (fa + fb) + fa, b.data<float>() + i * fb, static_cast<size_t>(fb) * sizeof(float));
  }
  return out;
}

StatusOr<std::unique_ptr<LearnedNodeTable>> LearnedNodeTable::Open(const LearnedTableOptions& options) {
  std::unique_ptr<LearnedNodeTable> t(new LearnedNodeTable(options));
  embed::EmbeddingBagCollectionOptions c;
  c.table_rows = {options.rows};
  c.dim = options.dim;
  c.optimizer = options.optimizer.kind;
  c.init.seed = options.seed;
  // Rows of about unit norm whatever DIM, as other node features are
  // (the table's own default, 1/sqrt(rows), would shrink with the graph).
  c.init.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(options.dim)));
  FS_ASSIGN_OR_RETURN(c.store.kind, storage::ParseRowStoreKind(options.store));
  if (c.store.kind == storage::RowStoreKind::kRocksDb) {
    return InvalidArgument("feature_store: learned node features are stored in memory, mmap or disk");
  }
  c.store.create = true;
  c.store.io_depth = options.io_depth;
  if (c.store.kind != storage::RowStoreKind::kMemory) {
    if (options.dir.empty()) return Internal("learned node features: no directory for the table's file");
    c.store.path = options.dir + "/learned_rows.npy";
  }
  c.cache.policy = options.cache_policy;
  c.cache.capacity_bytes = options.cache_bytes;
  c.cache.lookahead = options.lookahead;
  FS_ASSIGN_OR_RETURN(t->collection_, embed::EmbeddingBagCollection::Open(c));
  t->lookahead_ = t->collection_->table()->direct() ? 0 : options.lookahead;
  return t;
}

Status LearnedNodeTable::SetStaticKeys(std::vector<int64_t> keys) {
  std::lock_guard<std::mutex> lock(mu_);
  return collection_->table()->SetStaticKeys(std::move(keys));
}

Status LearnedNodeTable::Enqueue(const Tensor& ids) {
  FS_RETURN_IF_ERROR(CheckDType(ids, DType::kI64, "learned node features: ids"));
  const int64_t n = ids.numel();
  // One bag of one row per node: the bag sum is the row itself.
  Tensor offsets = Tensor::Empty({n + 1}, DType::kI64);
  int64_t* off = offsets.data<int64_t>();
  for (int64_t i = 0; i <= n; ++i) off[i] = i;
  Tensor keys = ids;
  if (!keys.is_contiguous()) {
    FS_ASSIGN_OR_RETURN(keys, ids.Contiguous());
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return FailedPrecondition("learned node features: Enqueue after Close");
  FS_RETURN_IF_ERROR(collection_->Enqueue(keys, offsets));
  sizes_.push_back(n);
  ++enqueued_;
  ready_.notify_all();
  return Status::OK();
}

void LearnedNodeTable::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  closed_ = true;
  collection_->Close();
  ready_.notify_all();
}

void LearnedNodeTable::WaitReady() {
  std::unique_lock<std::mutex> lock(mu_);
  ready_.wait(lock, [&] { return closed_ || enqueued_ - taken_ > lookahead_; });
}

StatusOr<autograd::Var> LearnedNodeTable::Forward(autograd::Tape& tape, int64_t step, const Tensor& left) {
  Tensor out;
  {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait(lock, [&] { return closed_ || enqueued_ - taken_ > lookahead_; });
    if (enqueued_ == taken_) return FailedPrecondition("learned node features: no batch enqueued");
    ++taken_;
    out = Tensor::Empty({sizes_.front(), options_.dim}, DType::kF32);
    rows_requested_ += sizes_.front();
    sizes_.pop_front();
    FS_RETURN_IF_ERROR(collection_->Forward(tape.ctx(), Tensor(), &out));
  }
  const int64_t width = left.defined() ? left.size(1) : 0;
  if (left.defined()) {
    if (left.dtype() != DType::kF32 || left.dim() != 2 || !left.is_contiguous() || left.size(0) != out.size(0)) {
      return Internal("learned node features: the file features beside them are " + left.ToString() + ", not " +
                      std::to_string(out.size(0)) + " contiguous f32 rows");
    }
    out = ConcatColumns(left, out);
  }
  if (!tape.recording()) return autograd::Var(out);
  // The rows stand behind a leaf that receives no dense gradient: the
  // backward node updates them in place, under the lock (the sample stage
  // may be enqueueing meanwhile).
  autograd::Var rows(Tensor::Zeros({1}, DType::kF32), /*requires_grad=*/true);
  kernels::SparseOptimizerConfig config = options_.optimizer;
  config.step = step;
  return tape.RecordGrad({rows}, out, [this, config, width](const ExecContext& ctx, const Tensor& grad_out) {
    Tensor grad = grad_out;
    if (width > 0) {  // the rows' columns only: the file features take no gradient
      FS_ASSIGN_OR_RETURN(grad, grad_out.Slice(1, width, grad_out.size(1)).Contiguous());
    }
    std::lock_guard<std::mutex> lock(mu_);
    return collection_->BackwardUpdate(ctx, config, grad);
  });
}

LearnedNodeTable::Io LearnedNodeTable::io() {
  std::lock_guard<std::mutex> lock(mu_);
  Io out;
  out.rows_requested = rows_requested_;
  const embed::EmbeddingTable* table = collection_->table();
  if (table->planner() != nullptr) {
    const cache::CacheCounters c = table->planner()->counters();
    out.hits = c.hits;
    out.misses = c.misses;
  }
  const storage::RowStoreStats st = table->store()->stats();
  out.bytes_read = st.bytes_read;
  out.bytes_written = st.bytes_written;
  out.reads = st.device_reads;
  out.rows_read = st.read_requests;
  return out;
}

Status LearnedNodeTable::PrepareReads() {
  std::lock_guard<std::mutex> lock(mu_);
  return collection_->Flush();
}

Status LearnedNodeTable::ReadEmbeddings(const std::vector<storage::RowRequest>& reqs) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t rb = layout().row_bytes();
  scratch_.resize(reqs.size() * static_cast<size_t>(rb));
  std::vector<storage::RowRequest> whole(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) whole[i] = {reqs[i].key, scratch_.data() + i * rb};
  FS_RETURN_IF_ERROR(collection_->table()->store()->Read(whole));
  for (size_t i = 0; i < reqs.size(); ++i) {
    std::memcpy(reqs[i].data, scratch_.data() + i * rb, static_cast<size_t>(options_.dim) * sizeof(float));
  }
  return Status::OK();
}

Status LearnedNodeTable::ReadRowsLocked(int64_t begin, int64_t end, void* out) {
  std::vector<int64_t> keys(static_cast<size_t>(end - begin));
  for (int64_t k = begin; k < end; ++k) keys[k - begin] = k;
  return collection_->table()->ReadRows(keys, out);
}

template <typename Fn>
Status LearnedNodeTable::ForEachChunk(Fn&& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  // A forward-only batch (evaluation) is released first; the rows then are
  // the store's after the dirty ones are written back.
  FS_RETURN_IF_ERROR(collection_->Flush());
  const int64_t rb = layout().row_bytes();
  std::vector<uint8_t> buf(static_cast<size_t>(std::min(kChunkRows, options_.rows) * rb));
  for (int64_t r0 = 0; r0 < options_.rows; r0 += kChunkRows) {
    const int64_t r1 = std::min(options_.rows, r0 + kChunkRows);
    FS_RETURN_IF_ERROR(ReadRowsLocked(r0, r1, buf.data()));
    FS_RETURN_IF_ERROR(fn(r0, r1, buf.data()));
  }
  return Status::OK();
}

StatusOr<Tensor> LearnedNodeTable::AllEmbeddings() {
  Tensor out = Tensor::Empty({options_.rows, options_.dim}, DType::kF32);
  const int64_t rb = layout().row_bytes();
  const size_t dim_bytes = static_cast<size_t>(options_.dim) * sizeof(float);
  FS_RETURN_IF_ERROR(ForEachChunk([&](int64_t r0, int64_t r1, const uint8_t* rows) -> Status {
    for (int64_t r = r0; r < r1; ++r) {
      std::memcpy(out.data<float>() + r * options_.dim, rows + (r - r0) * rb, dim_bytes);
    }
    return Status::OK();
  }));
  return out;
}

Status LearnedNodeTable::SaveRows(const std::string& path) {
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::NpyWriter> w,
                      storage::NpyWriter::Create(path, layout().dtype, Shape{layout().row_width()}));
  FS_RETURN_IF_ERROR(ForEachChunk([&](int64_t r0, int64_t r1, const uint8_t* rows) -> Status {
    return w->Append(rows, r1 - r0);
  }));
  return w->Finish();
}

Status LearnedNodeTable::LoadRows(const std::string& path) {
  storage::NpyInfo info;
  FS_ASSIGN_OR_RETURN(Tensor saved, storage::MmapNpy(path, &info));
  if (saved.dim() != 2 || saved.size(0) != options_.rows || saved.size(1) != layout().row_width() ||
      saved.dtype() != layout().dtype) {
    return DataLoss(path + ": holds " + DTypeName(saved.dtype()) + " rows of shape " + ShapeToString(saved.shape()) +
                    " but the learned node features need " + std::to_string(options_.rows) + " x " +
                    std::to_string(layout().row_width()) + " " + DTypeName(layout().dtype) + " (dim " +
                    std::to_string(options_.dim) + " with " + kernels::SparseOptimizerName(layout().optimizer) +
                    " state)");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (enqueued_ > 0) return FailedPrecondition("learned node features: rows loaded after batches were enqueued");
  // No row is in the cache yet, so writing the store is the whole load.
  storage::RowStore* store = collection_->table()->store();
  const int64_t rb = layout().row_bytes();
  const uint8_t* src = static_cast<const uint8_t*>(saved.raw_data());
  for (int64_t r0 = 0; r0 < options_.rows; r0 += kChunkRows) {
    const int64_t r1 = std::min(options_.rows, r0 + kChunkRows);
    std::vector<storage::RowRequest> reqs;
    reqs.reserve(static_cast<size_t>(r1 - r0));
    for (int64_t r = r0; r < r1; ++r) reqs.push_back({r, const_cast<uint8_t*>(src + r * rb)});
    FS_RETURN_IF_ERROR(store->Write(reqs));
  }
  return store->Flush();
}

StatusOr<std::shared_ptr<LearnedNodeTable>> OpenLearnedTable(const TrainOptions& o, int64_t nodes,
                                                             const Tensor& indptr, int lookahead,
                                                             std::unique_ptr<TempDir>* temp_dir) {
  LearnedTableOptions t;
  t.rows = nodes;
  FS_ASSIGN_OR_RETURN(t.dim, ParseLearnedDim(o.node_features));
  t.seed = o.seed;
  FS_ASSIGN_OR_RETURN(t.optimizer.kind, kernels::ParseSparseOptimizer(o.sparse_optimizer));
  t.optimizer.lr = o.sparse_lr;
  t.store = o.feature_store;
  t.io_depth = o.io_depth;
  FS_ASSIGN_OR_RETURN(t.cache_policy, cache::ParsePolicy(o.cache_policy));
  // file+learned: the cache options size the file features' cache.
  t.cache_bytes = WithFileFeatures(o.node_features) ? 0 : std::max<int64_t>(0, o.cache_size);
  t.lookahead = lookahead;
  if (t.store != "memory") {
    if (o.table_dir.empty()) {
      FS_ASSIGN_OR_RETURN(*temp_dir, TempDir::Create("", "foresight-learned-"));
      t.dir = (*temp_dir)->path();
    } else {
      FS_RETURN_IF_ERROR(MakeDirs(o.table_dir));
      t.dir = o.table_dir;
    }
  }
  FS_ASSIGN_OR_RETURN(std::unique_ptr<LearnedNodeTable> table, LearnedNodeTable::Open(t));
  if (t.cache_policy == cache::Policy::kStatic && t.cache_bytes > 0) {
    const int64_t slots = t.cache_bytes / table->layout().row_bytes();
    FS_RETURN_IF_ERROR(table->SetStaticKeys(KeysByInDegree(indptr, slots)));
  }
  return std::shared_ptr<LearnedNodeTable>(std::move(table));
}

}  // namespace foresight::trainer::internal
