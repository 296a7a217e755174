// The sample stage: seeds of batch (epoch, b) from the order and their
// sampled neighbourhoods, for every batch from start_seq to end_seq, as far
// ahead of compute as the queues allow (across epoch boundaries). It owns
// its NeighborSampler (whose scratch is not shareable) and samples as a CPU
// step within the budget.
#include "feature_pipeline.h"
#include "foresight/sampler/resident_mask.h"

namespace foresight::trainer::internal {

Status FeaturePipeline::RunSample(StageWorker& w) {
  const PipelineConfig& c = config_;
  // However the stage ends, a consumer waiting on on_sampled is woken.
  struct EndNotice {
    const std::function<void()>& fn;
    ~EndNotice() {
      if (fn) fn();
    }
  } end_notice{c.on_sample_end};
  sampler::NeighborSampler sampler(c.graph, c.fanouts, c.seed);
  if (c.page_topology) FS_RETURN_IF_ERROR(sampler.PageTopology());
  sampler::ResidentMask resident;  // consecutive batches of a group reuse it
  for (int64_t seq = c.start_seq; seq < c.end_seq; ++seq) {
    auto b = std::make_unique<PipelineBatch>();
    b->seq = seq;
    b->epoch = seq / c.batches_per_epoch;
    b->index = seq % c.batches_per_epoch;
    Stopwatch timer;
    FS_RETURN_IF_ERROR(budget_.Run([&]() -> Status {
      const Tensor seeds = c.order->Batch(b->epoch, b->index);
      if (!seeds.defined()) {
        return Internal("no seeds for batch " + std::to_string(b->index) + " of epoch " + std::to_string(b->epoch));
      }
      if (c.resident_order != nullptr) {
        FS_RETURN_IF_ERROR(resident.Set(c.resident_order->offsets(),
                                        c.resident_order->ResidentPartitions(b->epoch, b->index)));
        return sampler.Sample(c.ctx, seeds, b->epoch, b->index, &b->sampled, &resident.mask());
      }
      return sampler.Sample(c.ctx, seeds, b->epoch, b->index, &b->sampled);
    }));
    if (c.on_sampled) FS_RETURN_IF_ERROR(c.on_sampled(b->seq, b->sampled.input_nodes));
    const double busy = timer.Lap();
    double waited = 0;
    const int64_t epoch = b->epoch;
    const bool pushed = w.Push(sampled_, std::move(b), &waited);
    w.Book(epoch, busy, waited);
    if (!pushed) return Status::OK();  // cancelled
  }
  sampled_.Close();
  return Status::OK();
}

}  // namespace foresight::trainer::internal
