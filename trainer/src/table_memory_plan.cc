#include "table_memory_plan.h"

#include <algorithm>

#include "foresight/cache/cache_planner.h"

namespace foresight::trainer::internal {

bool TableUsesWindowIndex(const TrainOptions& o) {
  return o.cache_policy == "lookahead" && (o.table_store != "memory" || o.cache_size != 0);
}

void AddTableStoreItems(const TrainOptions& o, int64_t table_rows, int64_t row_bytes, int64_t window_keys,
                        MemoryEstimate* e) {
  // A memory store holds every row; an mmap store's touched pages count.
  if (o.table_store == "memory" || o.table_store == "mmap") {
    e->items.push_back({"tables (" + o.table_store + " store)", table_rows * row_bytes, MemoryScale::kGraph});
  }
  // The disk store's bounce buffers: io_depth extents of up to 256 KiB
  // (storage::RowStoreOptions::max_coalesce_bytes).
  if (o.table_store == "disk") {
    e->items.push_back({"disk store buffers", static_cast<int64_t>(o.io_depth) * (256 << 10), MemoryScale::kFixed});
    // One bit a row: written since the table was created (rows not written
    // are computed, not read; embed's InitialRowsStore).
    e->items.push_back({"written-rows bits", (table_rows + 63) / 64 * 8, MemoryScale::kGraph});
  }
  // The planner's index: lookahead's map of the window's keys (its slots'
  // entries are charged with the slots), lru's and static's per-key arrays
  // (8 bytes a row).
  if (TableUsesWindowIndex(o)) {
    cache::CacheConfig c;
    c.window_index_keys = window_keys;
    // + the rounding of a map made for more keys
    e->items.push_back({"cache index", cache::LookaheadIndexBytes(c) + cache::LookaheadWindowIndexRoundingBytes(), MemoryScale::kBatch});
  } else if (o.table_store != "memory" || o.cache_size != 0) {
    e->items.push_back({"cache index", table_rows * 8, MemoryScale::kGraph});
  }
}

StatusOr<int64_t> PlanTableCacheBytes(const TrainOptions& options, const MemoryEstimate& estimate, int64_t row_bytes,
                                      const std::string& advice) {
  const std::string minimum = "the smallest --memory-budget that works is " +
                              FormatBytes(TableMinimumBudget(options, estimate, row_bytes)) + "; or " + advice;
  if (!TableUsesWindowIndex(options)) return PlanCacheBytesWithin(options, estimate, "table cache", minimum);
  if (options.cache_size >= 0) {
    // The given cache's slots add their index entries to the estimate.
    MemoryEstimate with_slots = estimate;
    with_slots.items.push_back({"cache index of the slots", options.cache_size / row_bytes * WindowIndexBytesPerSlot(),
                                MemoryScale::kFixed});
    return PlanCacheBytesWithin(options, with_slots, "table cache", minimum);
  }
  FS_ASSIGN_OR_RETURN(const int64_t left, PlanCacheBytesWithin(options, estimate, "table cache", minimum));
  // What is left pays for each slot's row and its index entries.
  return left / (row_bytes + WindowIndexBytesPerSlot()) * row_bytes;
}

int64_t TableMinimumBudget(const TrainOptions& options, const MemoryEstimate& estimate, int64_t row_bytes) {
  return MinimumBudget(estimate, row_bytes + (TableUsesWindowIndex(options) ? WindowIndexBytesPerSlot() : 0));
}

}  // namespace foresight::trainer::internal
