// The options of the shallow link models' entity and relation tables
// (private to the trainer), shared by the one-rank trainer
// (embed::EmbeddingTableOptions) and the sharded one
// (embed::EmbeddingBagCollectionOptions): the same initial rows, optimizer
// and cache on any rank count is what lets several ranks take the steps of
// one. Each caller sets its tables' rows, cache size and store.
#pragma once

#include <cstdint>

#include "foresight/cache/cache_planner.h"
#include "foresight/core/rng.h"
#include "foresight/kernels/ops.h"
#include "foresight/storage/row_store.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer::internal {

// Mixed into the seed of the relation rows' initialiser, so that they are
// not the entity rows' first rows.
inline constexpr uint64_t kRelationSeedStream = 0x52454C53ull;

// The entity table's: dim, optimizer, seeded initialiser, a store created
// fresh, and the cache's policy and lookahead.
template <typename TableOptions>
void SetLinkEntityTableOptions(const TrainOptions& o, kernels::SparseOptimizer optimizer, TableOptions* t) {
  t->dim = o.embedding_dim;
  t->optimizer = optimizer;
  t->init.seed = o.seed;
  t->init.scale = o.init_scale;
  t->store.create = true;
  t->cache.lookahead = o.EffectiveLookahead();
  t->cache.policy = o.cache_policy == "lru" ? cache::Policy::kLru : cache::Policy::kLookahead;
}

// The relation table's: the entity table's `entities` with its own seed,
// in memory and uncached (relations are few; every batch reads them).
template <typename TableOptions>
TableOptions LinkRelationTableOptions(const TrainOptions& o, const TableOptions& entities) {
  TableOptions r = entities;
  r.init.seed = Mix64(o.seed ^ kRelationSeedStream);
  r.store = storage::RowStoreOptions();
  r.store.create = true;
  r.cache = cache::CacheConfig();
  return r;
}

}  // namespace foresight::trainer::internal
