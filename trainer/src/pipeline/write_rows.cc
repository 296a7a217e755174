// The compute side of the write path: a training step that changed its
// batch's input rows (a learnable table read through the pipeline) hands
// them back here before Done. Each row goes where the batch read it from:
// its cache slot (pinned while the batch is in flight, so the slot is still
// this key's) or its bypass buffer. The write-back stage then writes the
// bypass rows to the store and releases the batch with wrote = true, which
// marks its slot rows dirty in the planner; they reach the store when a
// later plan evicts them (its writebacks) or at Finish. A later batch that
// needs one of these rows waits for this batch's release before it reads
// (the planner's read-after-write rule), so it never sees the old value.
#include <cstring>

#include "feature_pipeline.h"

namespace foresight::trainer::internal {

namespace {
constexpr int64_t kRowGrain = 256;  // rows per chunk (independent of the thread count)
}  // namespace

Status FeaturePipeline::WriteRows(PipelineBatch* b, const Tensor& rows) {
  if (b == nullptr) return InvalidArgument("WriteRows: no batch");
  if (row_path_.path != RowPath::kCached || !config_.cache.writable) {
    return FailedPrecondition("WriteRows: batch " + std::to_string(b->seq) +
                              ": the pipeline was started read-only (cache.writable is false)");
  }
  const cache::BatchPlan& plan = b->plan;
  const int64_t n = static_cast<int64_t>(plan.keys.size());
  const int64_t width = config_.store->row_width();
  if (!rows.defined() || rows.dtype() != DType::kF32 || rows.dim() != 2 || rows.size(0) != n ||
      rows.size(1) != width || !rows.is_contiguous()) {
    return InvalidArgument("WriteRows: batch " + std::to_string(b->seq) + ": expected contiguous f32 rows [" +
                           std::to_string(n) + ", " + std::to_string(width) + "], got " +
                           (rows.defined() ? rows.ToString() : std::string("none")));
  }
  const int64_t row_bytes = config_.store->row_bytes();
  const bool half = config_.store->dtype() == DType::kF16;
  const float* src = rows.data<float>();
  uint8_t* bypass = b->bypass_rows.data();
  SlotArena* arena = arena_.get();
  config_.ctx.pool->ParallelFor(n, kRowGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t loc = plan.location[i];
      uint8_t* dst = loc >= 0 ? arena->slot(loc) : bypass + b->bypass_index[i] * row_bytes;
      const float* row = src + i * width;
      if (!half) {
        std::memcpy(dst, row, static_cast<size_t>(row_bytes));
      } else {
        uint16_t* h = reinterpret_cast<uint16_t*>(dst);
        for (int64_t k = 0; k < width; ++k) h[k] = FloatToHalf(row[k]);
      }
    }
  });
  b->wrote = true;
  return Status::OK();
}

}  // namespace foresight::trainer::internal
