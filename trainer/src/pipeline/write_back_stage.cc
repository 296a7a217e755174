// The write-back stage: after compute, a batch that changed rows (writable
// stores: embedding tables later; never node features) writes its bypass
// rows to the store (its slot rows become dirty in the cache and are written
// when evicted or at Finish); then the batch is released: the plan stage
// unpins its slots and a read waiting on it (read-after-write) may go. Its
// I/O and the batch's counters are booked in the batch's epoch here, the
// last stage that touches the batch.
#include "feature_pipeline.h"

namespace foresight::trainer::internal {

Status FeaturePipeline::RunWriteBack(StageWorker& w) {
  const int64_t row_bytes = config_.store != nullptr ? config_.store->row_bytes() : 0;
  for (;;) {
    BatchPtr b;
    double waited = 0;
    if (!w.Pop(done_, &b, &waited)) break;
    Stopwatch timer;
    const bool wrote = b->wrote && config_.cache.writable;
    if (wrote && !b->plan.bypass.empty()) {
      std::vector<storage::RowRequest> writes;
      writes.reserve(b->plan.bypass.size());
      for (size_t j = 0; j < b->plan.bypass.size(); ++j) {
        writes.push_back({b->plan.keys[b->plan.bypass[j]], b->bypass_rows.data() + j * row_bytes});
      }
      std::lock_guard<std::mutex> lock(store_mu_);
      FS_RETURN_IF_ERROR(StoreWrite(writes, &b->io));
    }
    {
      std::lock_guard<std::mutex> lock(wrote_mu_);
      if (wrote) wrote_[b->seq] = true;
    }
    ledger_.AddIo(b->epoch, b->io);
    w.Book(b->epoch, timer.Lap(), waited);
    // The batch (its x, bypass rows, plan) goes before its release lets
    // the plan stage admit another: at most max_in_flight exist at once.
    const int64_t seq = b->seq;
    b.reset();
    control_.MarkReleased(seq);
  }
  return Status::OK();
}

}  // namespace foresight::trainer::internal
