// The choice of the pipeline's row path (feature_pipeline.h): the direct
// gather wherever it reads the same bytes as the cache planner would with
// nothing to cache, the planner everywhere else.
#include <string>

#include "feature_pipeline.h"

namespace foresight::trainer::internal {

RowPathChoice ChooseRowPath(const PipelineConfig& c) {
  if (c.store == nullptr) {
    return {RowPath::kDirect, "no feature rows to read: the model's input table encodes the input node ids"};
  }
  const std::string backend = c.store->backend();
  const int64_t slots = c.cache.row_bytes > 0 ? c.cache.capacity_bytes / c.cache.row_bytes : 0;
  if (!c.host_rows.defined()) {
    return {RowPath::kCached, "cache planner: the " + backend + " store's rows are reached only by I/O"};
  }
  // A negative capacity goes to the planner, whose Create rejects it.
  if (c.cache.capacity_bytes < 0 || slots > 0) {
    return {RowPath::kCached, "cache planner: " + std::to_string(slots) + "-slot " +
                                  cache::PolicyName(c.cache.policy) + " cache"};
  }
  if (c.cache.writable) {
    return {RowPath::kCached, "cache planner: changed rows are written back through it"};
  }
  if (c.force_cache_planner) return {RowPath::kCached, "cache planner: forced (direct gather disabled)"};
  return {RowPath::kDirect,
          "direct gather from the " + backend + " store's rows in memory (no cache): no planner, one copy into x"};
}

}  // namespace foresight::trainer::internal
