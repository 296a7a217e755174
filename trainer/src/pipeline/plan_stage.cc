// The plan stage: submits every sampled batch's input rows to the cache
// planner and plans a batch once the planner can see W batches past it (or
// the stream ended). Before planning batch t it applies the releases of
// batches <= t - max_in_flight, waiting for the write-back stage to finish
// them if needed; releases of later batches wait. So exactly the batches
// t - max_in_flight + 1 .. t - 1 are pinned while t is planned, whatever
// the timing, and plans (hence hits, misses and bytes) are reproducible.
#include <deque>

#include "feature_pipeline.h"

namespace foresight::trainer::internal {

Status FeaturePipeline::ApplyReleases(int64_t through) {
  if (through <= planner_released_through_) return Status::OK();
  if (!control_.WaitReleased(through)) return Status::OK();  // cancelled: the caller stops
  for (int64_t s = planner_released_through_ + 1; s <= through; ++s) {
    bool wrote = false;
    {
      std::lock_guard<std::mutex> lock(wrote_mu_);
      auto it = wrote_.find(s);
      if (it != wrote_.end()) {
        wrote = it->second;
        wrote_.erase(it);
      }
    }
    FS_RETURN_IF_ERROR(planner_->Release(s - config_.start_seq, wrote));  // planner seqs start at 0
    planner_released_through_ = s;
  }
  return Status::OK();
}

Status FeaturePipeline::RunPlan(StageWorker& w) {
  std::deque<BatchPtr> pending;  // submitted, not yet planned (at most W + 1)
  bool input_done = false;
  for (;;) {
    if (planner_->CanPlan()) {
      BatchPtr b = std::move(pending.front());
      pending.pop_front();
      Stopwatch timer;
      FS_RETURN_IF_ERROR(ApplyReleases(b->seq - config_.max_in_flight));
      const double waited_release = timer.Lap();
      if (control_.cancelled()) return Status::OK();
      FS_RETURN_IF_ERROR(budget_.Run([&]() -> Status {
        FS_ASSIGN_OR_RETURN(b->plan, planner_->PlanNext());
        return Status::OK();
      }));
      if (b->plan.seq != b->seq - config_.start_seq) {
        return Internal("plan " + std::to_string(b->plan.seq) + " for batch " + std::to_string(b->seq));
      }
      b->io.hits = b->plan.hits;
      b->io.misses = b->plan.misses;
      const double busy = timer.Lap();
      double waited = waited_release;
      const int64_t epoch = b->epoch;
      const bool pushed = w.Push(planned_, std::move(b), &waited);
      w.Book(epoch, busy, waited);
      if (!pushed) return Status::OK();
      continue;
    }
    if (input_done) break;  // nothing plannable and nothing more to come
    BatchPtr b;
    double waited = 0;
    if (!w.Pop(sampled_, &b, &waited)) {
      if (control_.cancelled()) return Status::OK();
      input_done = true;
      planner_->Close();
      continue;
    }
    Stopwatch timer;
    const Tensor& in = b->sampled.input_nodes;
    std::vector<int64_t> keys(in.data<int64_t>(), in.data<int64_t>() + in.numel());
    b->io.rows_requested = in.numel();
    FS_RETURN_IF_ERROR(budget_.Run([&] { return planner_->Submit(std::move(keys)); }));
    w.Book(b->epoch, timer.Lap(), waited);
    pending.push_back(std::move(b));
  }
  planned_.Close();
  return Status::OK();
}

}  // namespace foresight::trainer::internal
