// The policy implementations behind CachePlanner::Create, each for dense
// (flat array) and sparse (hash map) keys. Arguments are already checked.
#pragma once

#include <cstdint>
#include <memory>

#include "foresight/cache/cache_planner.h"

namespace foresight::cache::internal {

// sizeof the lru and static planners' per-key state (PlannerIndexBytes).
inline constexpr int64_t kSmallStateBytes = 8;

std::unique_ptr<CachePlanner> MakeLookaheadPlanner(const CacheConfig& config, int32_t num_slots);
std::unique_ptr<CachePlanner> MakeLruPlanner(const CacheConfig& config, int32_t num_slots);
std::unique_ptr<CachePlanner> MakeStaticPlanner(const CacheConfig& config, int32_t num_slots);

}  // namespace foresight::cache::internal
