// CachePlanner::Create and the policy names: checks the configuration and
// picks the implementation (policy x dense/sparse keys).
#include "foresight/cache/cache_planner.h"

#include <limits>
#include <new>

#include "planners.h"

namespace foresight::cache {

StatusOr<Policy> ParsePolicy(const std::string& name) {
  if (name == "lookahead") return Policy::kLookahead;
  if (name == "lru") return Policy::kLru;
  if (name == "static") return Policy::kStatic;
  return InvalidArgument("unknown cache policy '" + name + "' (expected lookahead, lru or static)");
}

const char* PolicyName(Policy p) {
  switch (p) {
    case Policy::kLookahead:
      return "lookahead";
    case Policy::kLru:
      return "lru";
    case Policy::kStatic:
      return "static";
  }
  return "unknown";
}

StatusOr<std::unique_ptr<CachePlanner>> CachePlanner::Create(const CacheConfig& config) {
  if (config.row_bytes <= 0) {
    return InvalidArgument("CacheConfig: row_bytes must be > 0, got " + std::to_string(config.row_bytes));
  }
  if (config.capacity_bytes < 0) {
    return InvalidArgument("CacheConfig: capacity_bytes must be >= 0, got " + std::to_string(config.capacity_bytes));
  }
  if (config.lookahead < 0) {
    return InvalidArgument("CacheConfig: lookahead must be >= 0, got " + std::to_string(config.lookahead));
  }
  if (config.key_space < 0) {
    return InvalidArgument("CacheConfig: key_space must be >= 0 (0 = sparse keys), got " +
                           std::to_string(config.key_space));
  }
  if (config.window_index_keys < 0) {
    return InvalidArgument("CacheConfig: window_index_keys must be >= 0 (0 = a flat array over key_space), got " +
                           std::to_string(config.window_index_keys));
  }
  if (config.companion_rows != 0 &&
      (config.page_rows <= 1 || config.companion_rows < config.page_rows || config.companion_rows % config.page_rows != 0)) {
    return InvalidArgument("CacheConfig: companion_rows must be 0 or a multiple of page_rows (> 1), got " +
                           std::to_string(config.companion_rows) + " with page_rows " +
                           std::to_string(config.page_rows));
  }
  if (config.page_rows < 0 || (config.page_rows > 1 && config.key_space == 0)) {
    return InvalidArgument("CacheConfig: page_rows must be >= 0, and > 1 only with dense keys (key_space > 0), got " +
                           std::to_string(config.page_rows) + " with key_space " + std::to_string(config.key_space));
  }
  const int64_t slots = config.capacity_bytes / config.row_bytes;
  if (slots >= std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("CacheConfig: capacity_bytes / row_bytes = " + std::to_string(slots) +
                           " slots; at most 2^31-2 are supported");
  }
  if (config.hot_slots < 0 || config.hot_slots > slots ||
      (config.hot_slots > 0 && config.policy != Policy::kLookahead)) {
    return InvalidArgument("CacheConfig: hot_slots must be in [0, num_slots] = [0, " + std::to_string(slots) +
                           "], and > 0 only with the lookahead policy, got " + std::to_string(config.hot_slots) +
                           " with policy " + PolicyName(config.policy));
  }
  const int32_t num_slots = static_cast<int32_t>(slots);
  try {
    switch (config.policy) {
      case Policy::kLookahead:
        return internal::MakeLookaheadPlanner(config, num_slots);
      case Policy::kLru:
        return internal::MakeLruPlanner(config, num_slots);
      case Policy::kStatic:
        return internal::MakeStaticPlanner(config, num_slots);
    }
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("CachePlanner: cannot allocate the state of " + std::to_string(config.key_space) +
                             " keys and " + std::to_string(num_slots) + " slots");
  }
  return InvalidArgument("CacheConfig: unknown policy value " + std::to_string(static_cast<int>(config.policy)));
}

int64_t PlannerIndexBytes(const CacheConfig& config) {
  if (config.policy == Policy::kLookahead) return LookaheadIndexBytes(config);
  // LruState and StaticState: a slot and a last user, int32 each. Sparse
  // keys: a map entry per key held (the resident rows), the caller's count.
  return config.key_space > 0 ? (config.key_space + 1) * internal::kSmallStateBytes : 0;
}

int64_t SlotRecordBytes(const CacheConfig& config) {
  // SlotTable: key_ (i64), pins_ (i32), dirty_ (u8), free_ (i32).
  int64_t bytes = 8 + 4 + 1 + 4;
  // The eviction order's doubly linked SlotList (i32 prev and next).
  if (config.policy != Policy::kStatic) bytes += 8;
  // Lookahead keeps clean and dirty rows in two lists: a byte names the one.
  if (config.policy == Policy::kLookahead) bytes += 1;
  return bytes;
}

}  // namespace foresight::cache
