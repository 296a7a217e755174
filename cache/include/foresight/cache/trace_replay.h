// Replays a recorded key trace (the rows each batch reads, in batch order)
// through a cache planner as the training pipeline drives it, and returns
// the planner's counters: what-if analysis of a policy and a cache size
// without reading any row (`foresight cache-curve`).
#pragma once

#include <cstdint>
#include <vector>

#include "foresight/cache/cache_planner.h"
#include "foresight/core/status.h"

namespace foresight::cache {

struct ReplayOptions {
  // Batches planned and not yet released when the next is planned, as the
  // pipeline keeps them (their slots are pinned): before planning batch t,
  // every batch <= t - max_in_flight is released. >= 1. Default: 4
  int max_in_flight = 4;
  // static, or lookahead with hot_slots > 0: keys in fill priority order
  // (SetStaticKeys).
  std::vector<int64_t> static_keys;
};

// Submits every batch of `trace` (distinct keys each, as CachePlanner::Submit
// requires), plans each once the planner can, releases as described above,
// and returns the counters after the last batch. Errors are the planner's
// (an invalid config, a repeated or out-of-range key naming its batch).
// The trace is copied batch by batch; it is not modified.
StatusOr<CacheCounters> ReplayTrace(const CacheConfig& config, const std::vector<std::vector<int64_t>>& trace,
                                    const ReplayOptions& options = ReplayOptions());

}  // namespace foresight::cache
