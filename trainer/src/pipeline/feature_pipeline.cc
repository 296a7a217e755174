#include "feature_pipeline.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "foresight/core/mapped_pages.h"


namespace foresight::trainer::internal {

FeaturePipeline::FeaturePipeline(PipelineConfig config)
    : config_(std::move(config)),
      budget_(config_.ctx.pool),
      sampled_(config_.queue_capacity + std::max(0, config_.sample_ahead)),
      planned_(config_.queue_capacity),
      read_(config_.queue_capacity),
      assembled_(config_.queue_capacity),
      done_(config_.queue_capacity) {
  helps_ = config_.compute_helps && config_.ctx.pool != nullptr && config_.ctx.pool->num_threads() > 1;
  if (helps_) {
    // A batch, the end or a cancellation wakes Next() out of its help.
    ThreadPool* pool = config_.ctx.pool;
    assembled_.SetOnReady([pool] { pool->Wake(); });
  }
}

StatusOr<std::unique_ptr<FeaturePipeline>> FeaturePipeline::Start(PipelineConfig config) {
  std::unique_ptr<FeaturePipeline> p(new FeaturePipeline(std::move(config)));
  FS_RETURN_IF_ERROR(p->Init());
  p->StartStages();
  return p;
}

Status FeaturePipeline::Init() {
  const PipelineConfig& c = config_;
  if (c.ctx.pool == nullptr) return Internal("pipeline: no thread pool in the context");
  if (c.order == nullptr) return Internal("pipeline: no batch order");
  if (c.input_dropout != 0.0f && (!(c.input_dropout > 0.0f && c.input_dropout < 1.0f) || !c.input_dropout_key)) {
    return Internal("pipeline: input_dropout " + std::to_string(c.input_dropout) +
                    " must be in (0, 1) and come with its key");
  }
  if (!c.page_topology) {
    // A resident (mapped) topology is read at random by every batch: map
    // all of it now, so that the first epoch does not fault it in page by
    // page on the sample stage's turn (issue 19: the first epoch of every
    // run was the slow one). The memory plan counts it whole already.
    // Paged topologies load and give back their pages per batch instead.
    TouchPages(c.graph.indptr);
    TouchPages(c.graph.indices);
    TouchPages(c.labels);
  }
  if (c.store == nullptr) {
    // No feature rows: the compute stage builds x from the input node ids.
    if (c.cache.capacity_bytes != 0 || c.cache.writable || c.host_rows.defined()) {
      return Internal("pipeline: a cache or host rows without a feature store");
    }
    row_path_ = ChooseRowPath(c);
    control_.MarkReleased(c.start_seq - 1);
    for (BoundedQueue<BatchPtr>* q : {&sampled_, &planned_, &read_, &assembled_, &done_}) {
      control_.OnCancel([q] { q->Cancel(); });
    }
    return Status::OK();
  }
  if (c.batches_per_epoch < 1 || c.start_seq < 0 || c.end_seq < c.start_seq) {
    return Internal("pipeline: bad batch range [" + std::to_string(c.start_seq) + ", " +
                    std::to_string(c.end_seq) + ") of " + std::to_string(c.batches_per_epoch) +
                    " per epoch");
  }
  if (c.queue_capacity < 1 || c.max_in_flight < 1) {
    return Internal("pipeline: queue capacity and batches in flight must be >= 1");
  }
  if (c.store->dtype() != DType::kF32 && c.store->dtype() != DType::kF16) {
    return InvalidArgument(std::string("feature_store: features of dtype ") + DTypeName(c.store->dtype()) +
                           " are not supported (f32 or f16)");
  }
  if (c.store->num_rows() != c.graph.num_dst()) {
    return InvalidArgument("feature_store: " + std::to_string(c.store->num_rows()) + " feature rows for a graph of " +
                           std::to_string(c.graph.num_dst()) + " nodes");
  }
  if (c.cache.row_bytes != c.store->row_bytes()) {
    return Internal("pipeline: cache row_bytes " + std::to_string(c.cache.row_bytes) + " != store's " +
                    std::to_string(c.store->row_bytes()));
  }
  if (c.cache.writable && !c.store->writable()) {
    return FailedPrecondition("pipeline: a writable cache over a read-only " + c.store->backend() + " store");
  }
  row_path_ = ChooseRowPath(c);
  FS_RETURN_IF_ERROR(row_path_.path == RowPath::kDirect ? InitDirect() : InitCached());
  const std::string backend = c.store->backend();
  copy_store_ = backend == "memory" || backend == "mmap";
  control_.MarkReleased(c.start_seq - 1);
  for (BoundedQueue<BatchPtr>* q : {&sampled_, &planned_, &read_, &assembled_, &done_}) {
    control_.OnCancel([q] { q->Cancel(); });
  }
  return Status::OK();
}

Status FeaturePipeline::InitCached() {
  const PipelineConfig& c = config_;
  FS_ASSIGN_OR_RETURN(planner_, cache::CachePlanner::Create(c.cache));
  if (c.cache.policy == cache::Policy::kStatic || c.cache.hot_slots > 0) {
    // The planner holds the keys until its first plan; none stay here.
    FS_RETURN_IF_ERROR(planner_->SetStaticKeys(std::move(config_.static_keys)));
  }
  FS_ASSIGN_OR_RETURN(arena_, HostSlotArena(planner_->num_slots(), c.cache.row_bytes));
  FS_RETURN_IF_ERROR(inputs_.Reserve(c.reserved_inputs, c.reserved_input_rows, c.store->row_width()));
  planner_released_through_ = c.start_seq - 1;
  return Status::OK();
}

Status FeaturePipeline::InitDirect() {
  const Tensor& rows = config_.host_rows;
  const storage::RowStore& store = *config_.store;
  if (!rows.device().is_cpu() || rows.dim() != 2 || !rows.is_contiguous() || rows.dtype() != store.dtype() ||
      rows.size(0) != store.num_rows() || rows.size(1) != store.row_width()) {
    return Internal("pipeline: host rows " + rows.ToString() + " are not the " + store.backend() + " store's " +
                    std::to_string(store.num_rows()) + " x " + std::to_string(store.row_width()) + " " +
                    DTypeName(store.dtype()) + " rows");
  }
  return Status::OK();
}

namespace {

struct StageEntry {
  Stage stage;
  Status (FeaturePipeline::*body)(StageWorker&);
};

}  // namespace

void FeaturePipeline::StartStages() {
  using P = FeaturePipeline;
  static const StageEntry kCachedStages[] = {{Stage::kSample, &P::RunSample},
                                             {Stage::kPlan, &P::RunPlan},
                                             {Stage::kRead, &P::RunRead},
                                             {Stage::kAssemble, &P::RunAssemble},
                                             {Stage::kWriteBack, &P::RunWriteBack}};
  static const StageEntry kDirectStages[] = {{Stage::kSample, &P::RunSample},
                                             {Stage::kRead, &P::RunDirectRead},
                                             {Stage::kWriteBack, &P::RunWriteBack}};
  const bool direct = row_path_.path == RowPath::kDirect;
  const StageEntry* begin = direct ? std::begin(kDirectStages) : std::begin(kCachedStages);
  const StageEntry* end = direct ? std::end(kDirectStages) : std::end(kCachedStages);
  for (const StageEntry* e = begin; e != end; ++e) {
    workers_.push_back(std::make_unique<StageWorker>(e->stage, &control_, &ledger_));
    StageWorker* w = workers_.back().get();
    w->Start([this, w, body = e->body] { return (this->*body)(*w); });
  }
}

void FeaturePipeline::StopStages() {
  control_.Cancel();
  for (auto& w : workers_) w->Join();
  workers_.clear();
}

FeaturePipeline::~FeaturePipeline() { StopStages(); }

Status FeaturePipeline::Next(BatchPtr* batch, double* waited) {
  Stopwatch t;
  if (helps_) config_.ctx.pool->HelpUntil([this] { return assembled_.CanPop(); });
  const bool ok = assembled_.Pop(batch);
  *waited += t.Lap();
  if (ok) return Status::OK();
  FS_RETURN_IF_ERROR(control_.error());
  if (control_.cancelled()) return Cancelled("pipeline: stopped");
  return OutOfRange("pipeline: no batch after " + std::to_string(config_.end_seq - 1));
}

Status FeaturePipeline::Done(BatchPtr batch, double* waited) {
  Stopwatch t;
  const bool ok = done_.Push(std::move(batch));
  *waited += t.Lap();
  if (ok) return Status::OK();
  FS_RETURN_IF_ERROR(control_.error());
  return Cancelled("pipeline: stopped");
}

Status FeaturePipeline::WaitReleased(int64_t seq) {
  if (!control_.WaitReleased(seq)) {
    FS_RETURN_IF_ERROR(control_.error());
    return Cancelled("pipeline: stopped before batch " + std::to_string(seq) + " was written back");
  }
  return control_.error();
}

Status FeaturePipeline::Finish() {
  if (finished_) return Status::OK();
  FS_RETURN_IF_ERROR(WaitReleased(config_.end_seq - 1));
  // Every stage ends on its own once its input is closed and drained; the
  // write-back stage's input is the compute stage's, closed here.
  done_.Close();
  for (auto& w : workers_) w->Join();
  workers_.clear();
  FS_RETURN_IF_ERROR(control_.error());
  finished_ = true;
  if (planner_ == nullptr) return Status::OK();  // kDirect: no cache, nothing dirty
  FS_RETURN_IF_ERROR(ApplyReleases(config_.end_seq - 1));
  if (!config_.cache.writable) return Status::OK();
  FS_ASSIGN_OR_RETURN(std::vector<cache::SlotKey> dirty, planner_->TakeDirty());
  std::vector<storage::RowRequest> reqs;
  reqs.reserve(dirty.size());
  for (const cache::SlotKey& sk : dirty) reqs.push_back({sk.key, arena_->slot(sk.slot)});
  BatchIo io;
  std::lock_guard<std::mutex> lock(store_mu_);
  if (!reqs.empty()) FS_RETURN_IF_ERROR(StoreWrite(reqs, &io));
  ledger_.AddIo(config_.end_seq <= 0 ? 0 : (config_.end_seq - 1) / config_.batches_per_epoch, io);
  return config_.store->Flush();
}

Status FeaturePipeline::StoreRead(const std::vector<storage::RowRequest>& reqs, BatchIo* io) {
  const storage::RowStoreStats before = config_.store->stats();
  FS_RETURN_IF_ERROR(config_.store->Read(reqs));
  const storage::RowStoreStats after = config_.store->stats();
  io->bytes_read += after.bytes_read - before.bytes_read;
  io->reads += after.device_reads - before.device_reads;
  io->rows_read += after.read_requests - before.read_requests;
  io->bytes_written += after.bytes_written - before.bytes_written;
  return Status::OK();
}

Status FeaturePipeline::StoreWrite(const std::vector<storage::RowRequest>& reqs, BatchIo* io) {
  const storage::RowStoreStats before = config_.store->stats();
  FS_RETURN_IF_ERROR(config_.store->Write(reqs));
  const storage::RowStoreStats after = config_.store->stats();
  io->bytes_read += after.bytes_read - before.bytes_read;
  io->reads += after.device_reads - before.device_reads;
  io->bytes_written += after.bytes_written - before.bytes_written;
  return Status::OK();
}

}  // namespace foresight::trainer::internal
