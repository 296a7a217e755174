// The assemble stage: the batch's f32 input x, row i = the store's row of
// input node i, taken from its cache slot or from the batch's bypass buffer
// and widened from f16 when the features are f16 (exact, like the
// in-memory gather), plus the seeds' labels. A CPU step within the budget.
// Where the read stage already put the bypass rows in x (BypassIntoX),
// only the slot rows are copied. x comes from the pipeline's InputBuffers.
#include <cstring>

#include "../node_data.h"
#include "feature_pipeline.h"

namespace foresight::trainer::internal {

namespace {
constexpr int64_t kRowGrain = 256;  // rows per chunk (independent of the thread count)
}  // namespace

Status FeaturePipeline::Assemble(PipelineBatch* b) {
  const cache::BatchPlan& plan = b->plan;
  const int64_t n = static_cast<int64_t>(plan.keys.size());
  const int64_t width = config_.store->row_width();
  const int64_t row_bytes = config_.store->row_bytes();
  const DType dtype = config_.store->dtype();
  for (int64_t i = 0; i < n; ++i) {
    if (plan.location[i] < 0 && b->bypass_index[i] < 0) {
      return Internal("batch " + std::to_string(b->seq) + ": row " + std::to_string(plan.keys[i]) +
                      " has neither a slot nor a bypass buffer");
    }
  }
  // The read stage took x already when it put the bypass rows there.
  const bool bypass_in_x = b->x.defined();
  if (!bypass_in_x) {
    FS_ASSIGN_OR_RETURN(b->x, inputs_.Take(n, width));
  }
  float* x = b->x.data<float>();
  const uint8_t* bypass = b->bypass_rows.data();
  SlotArena* arena = arena_.get();
  config_.ctx.pool->ParallelFor(n, kRowGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t loc = plan.location[i];
      if (loc < 0 && bypass_in_x) continue;
      const uint8_t* src = loc >= 0 ? arena->slot(loc) : bypass + b->bypass_index[i] * row_bytes;
      float* dst = x + i * width;
      if (dtype == DType::kF32) {
        std::memcpy(dst, src, static_cast<size_t>(row_bytes));
      } else {
        const uint16_t* h = reinterpret_cast<const uint16_t*>(src);
        for (int64_t k = 0; k < width; ++k) dst[k] = HalfToFloat(h[k]);
      }
    }
  });
  return GatherBatchLabels(b);
}

Status FeaturePipeline::RunAssemble(StageWorker& w) {
  return w.Relay(read_, assembled_, [&](BatchPtr& b, double* busy, double*) -> StatusOr<bool> {
    Stopwatch timer;
    FS_RETURN_IF_ERROR(budget_.Run([&] { return Assemble(b.get()); }));
    if (!config_.cache.writable) {
      // Compute reads only x: the bypass rows are not needed again.
      std::vector<uint8_t>().swap(b->bypass_rows);
    }
    *busy = timer.Lap();
    return true;
  });
}

}  // namespace foresight::trainer::internal
