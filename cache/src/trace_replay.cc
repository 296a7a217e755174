#include "foresight/cache/trace_replay.h"

#include <memory>
#include <string>

namespace foresight::cache {

StatusOr<CacheCounters> ReplayTrace(const CacheConfig& config, const std::vector<std::vector<int64_t>>& trace,
                                    const ReplayOptions& options) {
  if (options.max_in_flight < 1) {
    return InvalidArgument("max_in_flight must be >= 1, got " + std::to_string(options.max_in_flight));
  }
  FS_ASSIGN_OR_RETURN(std::unique_ptr<CachePlanner> planner, CachePlanner::Create(config));
  if (config.policy == Policy::kStatic || config.hot_slots > 0) FS_RETURN_IF_ERROR(planner->SetStaticKeys(options.static_keys));
  int64_t released_through = -1;  // every batch <= this was released
  // Plans what the planner can plan now; the pipeline's plan stage does the
  // same after each submit, so the pinned batches match training's.
  auto plan_ready = [&]() -> Status {
    while (planner->CanPlan()) {
      const int64_t next = released_through + planner->in_flight() + 1;
      for (int64_t s = released_through + 1; s <= next - options.max_in_flight; ++s) {
        FS_RETURN_IF_ERROR(planner->Release(s, /*wrote=*/false));
        released_through = s;
      }
      FS_ASSIGN_OR_RETURN(BatchPlan plan, planner->PlanNext());
      if (plan.seq != next) {
        return Internal("replay planned batch " + std::to_string(plan.seq) + ", expected " + std::to_string(next));
      }
    }
    return Status::OK();
  };
  for (size_t b = 0; b < trace.size(); ++b) {
    const Status s = planner->Submit(trace[b]);
    if (!s.ok()) return s.WithContext("trace batch " + std::to_string(b));
    FS_RETURN_IF_ERROR(plan_ready());
  }
  planner->Close();
  FS_RETURN_IF_ERROR(plan_ready());
  return planner->counters();
}

}  // namespace foresight::cache
