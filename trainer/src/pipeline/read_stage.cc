// The read stage: executes plans in sequence order against the row store.
// Per plan: wait for the release its read-after-write rule names, write back
// the dirty rows it evicts, then read its fetches into cache slots and its
// bypass rows into the batch's own buffer, in one submission (the store
// coalesces and overlaps them up to its io depth; bypass rows of f32
// read-only features land in the batch's x directly). Disk reads are issued and
// awaited on this thread (it sleeps in the kernel); reads that are memory
// copies (memory and mmap stores) run as CPU steps within the budget.
#include "feature_pipeline.h"

namespace foresight::trainer::internal {

Status FeaturePipeline::ExecutePlan(PipelineBatch* b) {
  const cache::BatchPlan& plan = b->plan;
  const int64_t row_bytes = config_.store->row_bytes();
  if (plan.keys.size() != plan.location.size() ||
      static_cast<int64_t>(plan.keys.size()) != b->sampled.input_nodes.numel()) {
    return Internal("plan of batch " + std::to_string(b->seq) + " has " + std::to_string(plan.keys.size()) +
                    " keys for " + std::to_string(b->sampled.input_nodes.numel()) + " input rows");
  }
  if (!plan.writebacks.empty()) {
    std::vector<storage::RowRequest> writes;
    writes.reserve(plan.writebacks.size());
    for (const cache::SlotKey& sk : plan.writebacks) writes.push_back({sk.key, arena_->slot(sk.slot)});
    FS_RETURN_IF_ERROR(StoreWrite(writes, &b->io));
  }
  // Bypass rows go straight to their row of x when x holds the store's
  // bytes as they are (f32, read-only): one copy out of the store's buffer
  // instead of two. Otherwise into the batch's bypass buffer (f16 is
  // widened by assemble; a writable cache writes the buffer back).
  const bool into_x = BypassIntoX();  // then x's rows are row_bytes apart too
  uint8_t* bypass_base = nullptr;
  if (into_x) {
    FS_ASSIGN_OR_RETURN(b->x, inputs_.Take(static_cast<int64_t>(plan.keys.size()), config_.store->row_width()));
    bypass_base = reinterpret_cast<uint8_t*>(b->x.data<float>());
  } else {
    b->bypass_rows.resize(plan.bypass.size() * static_cast<size_t>(row_bytes));
    bypass_base = b->bypass_rows.data();
  }
  b->bypass_index.assign(plan.keys.size(), -1);
  std::vector<storage::RowRequest> reads;
  reads.reserve(plan.fetches.size() + plan.bypass.size());
  for (const cache::SlotKey& sk : plan.fetches) reads.push_back({sk.key, arena_->slot(sk.slot)});
  for (size_t j = 0; j < plan.bypass.size(); ++j) {
    const int64_t i = plan.bypass[j];
    if (i < 0 || i >= static_cast<int64_t>(plan.keys.size())) {
      return Internal("plan of batch " + std::to_string(b->seq) + ": bypass position " + std::to_string(i));
    }
    b->bypass_index[i] = static_cast<int32_t>(j);
    const int64_t at = into_x ? i : static_cast<int64_t>(j);
    reads.push_back({plan.keys[i], bypass_base + at * row_bytes});
  }
  if (reads.empty()) return Status::OK();
  return StoreRead(reads, &b->io);
}

Status FeaturePipeline::RunRead(StageWorker& w) {
  return w.Relay(planned_, read_, [&](BatchPtr& b, double* busy, double* waited) -> StatusOr<bool> {
    if (b->plan.wait_for_seq >= 0) {
      Stopwatch t;
      const bool released = control_.WaitReleased(b->plan.wait_for_seq + config_.start_seq);
      *waited += t.Lap();
      if (!released) return false;  // cancelled
    }
    Stopwatch timer;
    // The store lock is taken on this thread, before any CPU turn, so a
    // paused read (evaluation holds the store) never blocks a pool worker.
    std::unique_lock<std::mutex> store_lock(store_mu_);
    *waited += timer.Lap();
    if (copy_store_) {
      FS_RETURN_IF_ERROR(budget_.Run([&] { return ExecutePlan(b.get()); }));
    } else {
      FS_RETURN_IF_ERROR(ExecutePlan(b.get()));
    }
    *busy = timer.Lap();
    return true;
  });
}

}  // namespace foresight::trainer::internal
