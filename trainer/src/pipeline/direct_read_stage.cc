// The direct path's read stage (RowPath::kDirect): with the store's rows
// addressable in memory and no cache, a batch's x is gathered straight from
// them (kernels::GatherRows: one copy, f16 widened exactly, the same bits
// as the cached path's read + assemble) together with the seeds' labels, a
// CPU step within the budget (its row loop runs on the budget's worker, see
// cpu_budget.h; chunked the same whatever the thread count). It takes the
// store lock like the cached read stage, so evaluation's LockStore pauses
// it the same way.
#include "../node_data.h"
#include "feature_pipeline.h"
#include "foresight/core/mapped_pages.h"
#include "foresight/kernels/keyed_dropout.h"
#include "foresight/kernels/ops.h"

namespace foresight::trainer::internal {

Status FeaturePipeline::GatherBatchLabels(PipelineBatch* b) {
  FS_ASSIGN_OR_RETURN(b->labels, GatherLabels(config_.labels, b->sampled.seeds));
  // Paged: the seeds' label pages go back, as the sampler's CSR pages do
  // (checked releasable when the run started).
  if (config_.page_topology) ReleaseMappedPages(config_.labels);
  return Status::OK();
}

Status FeaturePipeline::GatherDirect(PipelineBatch* b) {
  const Tensor& ids = b->sampled.input_nodes;
  const int64_t n = ids.numel();
  if (config_.store == nullptr) return GatherBatchLabels(b);  // no rows: labels only, nothing read
  b->x = Tensor::Empty({n, config_.store->row_width()}, DType::kF32);
  if (config_.input_dropout > 0.0f) {
    // The step's dropout of x, done here as the rows are copied (see
    // PipelineConfig::input_dropout).
    const RngKey key = config_.input_dropout_key(b->epoch, b->index);
    FS_RETURN_IF_ERROR(
        kernels::GatherRowsDropout(config_.ctx.WithRng(key), config_.input_dropout, config_.host_rows, ids, &b->x));
    b->x_dropout_key = key;
  } else {
    FS_RETURN_IF_ERROR(kernels::GatherRows(config_.ctx, config_.host_rows, ids, &b->x));
  }
  FS_RETURN_IF_ERROR(GatherBatchLabels(b));
  // The counters mean what they mean on the cached path with no cache (every
  // row a miss read around the cache): the batch's distinct input rows, all
  // missed, and the bytes a memory or mmap store reports for reading them
  // (row_bytes each). Nothing is written.
  b->io.rows_requested = n;
  b->io.hits = 0;
  b->io.misses = n;
  b->io.bytes_read = n * config_.store->row_bytes();
  b->io.rows_read = n;
  return Status::OK();
}

Status FeaturePipeline::RunDirectRead(StageWorker& w) {
  return w.Relay(sampled_, assembled_, [&](BatchPtr& b, double* busy, double* waited) -> StatusOr<bool> {
    Stopwatch timer;
    // As in the cached read stage: the store lock before any CPU turn.
    std::unique_lock<std::mutex> store_lock(store_mu_);
    *waited += timer.Lap();
    FS_RETURN_IF_ERROR(budget_.Run([&] { return GatherDirect(b.get()); }));
    *busy = timer.Lap();
    return true;
  });
}

}  // namespace foresight::trainer::internal
