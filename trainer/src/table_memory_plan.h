// The part of a memory plan that belongs to learnable tables behind the
// lookahead cache (DLRM tables, link prediction's entity rows): the
// store's own bytes, the planner's index, and the cache the budget leaves
// once every other item is paid, each slot with its index entries. Shared
// by dlrm_memory_plan and link_memory_plan. Private to the trainer.
#pragma once

#include <cstdint>
#include <string>

#include "foresight/cache/cache_planner.h"
#include "foresight/core/status.h"
#include "foresight/trainer/train_options.h"
#include "pipeline/memory_plan.h"

namespace foresight::trainer::internal {

// The lookahead planner's index is a map of the keys it holds (the
// resident rows and the keys of the batches in and around the window), not
// an array over every row (cache::CacheConfig::window_index_keys), when the
// tables sit behind a lookahead cache.
bool TableUsesWindowIndex(const TrainOptions& options);
// Bytes a cache slot adds beside its row under the window index: its map
// entry (cache::LookaheadWindowIndexBytesPerKey, 64), and its record in
// the dirty list a flush takes (16).
inline int64_t WindowIndexBytesPerSlot() { return cache::LookaheadWindowIndexBytesPerKey() + 16; }

// Adds the table store's and the planner index's items to `e`:
// - memory or mmap store: every row (`table_rows` x `row_bytes`, scale
//   graph); disk: its bounce buffers (io_depth extents of 256 KiB) and
//   its written-rows bits (a bit a row);
// - with a cache: the window index for `window_keys` keys (lookahead), or
//   8 bytes a row (lru, static: per-key arrays, scale graph).
void AddTableStoreItems(const TrainOptions& options, int64_t table_rows, int64_t row_bytes, int64_t window_keys,
                        MemoryEstimate* e);

// The cache capacity in bytes: cache_size when given (checked against the
// budget with its slots' index entries), else what memory_budget leaves
// after `estimate`, each slot paying its row and (window index) its index
// entries, else 0. A budget below the estimate is ResourceExhausted naming
// the items, the smallest budget that works (TableMinimumBudget) and
// `advice`.
StatusOr<int64_t> PlanTableCacheBytes(const TrainOptions& options, const MemoryEstimate& estimate, int64_t row_bytes,
                                      const std::string& advice);

// The smallest --memory-budget `estimate` accepts: its items and one
// cache slot with its index entry, rounded up to a whole MiB.
int64_t TableMinimumBudget(const TrainOptions& options, const MemoryEstimate& estimate, int64_t row_bytes);

}  // namespace foresight::trainer::internal
