// DLRM's embedding tables as TrainOptions ask for them: one
// embed::EmbeddingBagCollection (a table per categorical field) on the
// chosen store (memory, or a file / database in a scratch directory under
// table_dir that is removed with it), behind the lookahead cache sized by
// cache_size or the memory plan (dlrm_memory_plan.h). On several ranks the
// collection is split between them (embed::ShardedEmbeddingBags, by
// options.sharding): each rank opens its shard on its own store, behind a
// cache planned for its rows. Private to the trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "foresight/autograd/module.h"
#include "foresight/core/communicator.h"
#include "foresight/embed/embedding_bag_collection.h"
#include "foresight/embed/sharded_embedding_bags.h"
#include "foresight/storage/clicks_dataset.h"
#include "foresight/trainer/train_options.h"
#include "temp_dir.h"

namespace foresight::trainer::internal {

struct DlrmTables {
  // Declared first, so it outlives the tables whose files it holds.
  std::unique_ptr<TempDir> dir;
  // One rank: the whole collection. Several: this rank's part of the split
  // one (sharded->shard() is its rows).
  std::unique_ptr<embed::EmbeddingBagCollection> tables;
  std::unique_ptr<embed::ShardedEmbeddingBags> sharded;
  int64_t cache_bytes = 0;  // the cache's capacity (0: no cache)

  // The rows this rank holds (its store, cache and counters).
  embed::EmbeddingBagCollection* local() const { return sharded ? sharded->shard() : tables.get(); }
};

// baseline_rss: the process's RSS before the dataset was opened (the memory
// plan's baseline). With the static policy the cache keeps the rows the
// training split uses most. `comm` of size > 1: the sharded tables.
StatusOr<DlrmTables> OpenDlrmTables(const TrainOptions& o, const storage::ClicksDataset& data,
                                    const autograd::Module& model, int64_t baseline_rss, Communicator* comm);

}  // namespace foresight::trainer::internal
