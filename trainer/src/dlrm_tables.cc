#include "dlrm_tables.h"


#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "dlrm_memory_plan.h"
#include "foresight/core/logging.h"

namespace foresight::trainer::internal {

namespace {

// The static policy's keys: the rows the training split uses most (ties by
// key), the DLRM counterpart of the GNN features' highest in-degree rows.
// key_of(table, id): the row's key in this rank's tables, -1 when another
// rank holds it.
std::vector<int64_t> StaticKeys(const storage::ClicksDataset& data,
                                const std::function<int64_t(int64_t, int64_t)>& key_of) {
  std::vector<std::pair<int64_t, int64_t>> counted;  // (-count, key)
  const storage::RowRange train = data.layout().train;
  for (int64_t k = 0; k < data.num_fields(); ++k) {
    std::vector<int64_t> count(static_cast<size_t>(data.field(k).rows), 0);
    const Tensor& ids = data.ids(k);
    const int64_t bag = data.field(k).bag_size;
    for (int64_t i = train.begin * bag; i < train.end * bag; ++i) {
      ++count[static_cast<size_t>(ids.dtype() == DType::kI32 ? ids.data<int32_t>()[i] : ids.data<int64_t>()[i])];
    }
    for (size_t r = 0; r < count.size(); ++r) {
      const int64_t key = count[r] > 0 ? key_of(k, static_cast<int64_t>(r)) : -1;
      if (key >= 0) counted.emplace_back(-count[r], key);
    }
  }
  std::sort(counted.begin(), counted.end());
  std::vector<int64_t> keys;
  keys.reserve(counted.size());
  for (const auto& [c, key] : counted) keys.push_back(key);
  return keys;
}

}  // namespace

StatusOr<DlrmTables> OpenDlrmTables(const TrainOptions& o, const storage::ClicksDataset& data,
                                    const autograd::Module& model, int64_t baseline_rss, Communicator* comm) {
  DlrmTables out;
  const bool sharded = comm != nullptr && comm->size() > 1;
  embed::EmbeddingBagCollectionOptions eo;
  for (int64_t k = 0; k < data.num_fields(); ++k) eo.table_rows.push_back(data.field(k).rows);
  eo.dim = o.embedding_dim;
  FS_ASSIGN_OR_RETURN(eo.optimizer, kernels::ParseSparseOptimizer(o.sparse_optimizer));
  eo.init.seed = o.seed;
  FS_ASSIGN_OR_RETURN(eo.store.kind, storage::ParseRowStoreKind(o.table_store));
  eo.store.writable = true;
  eo.store.create = true;
  eo.store.io_depth = o.io_depth;
  if (eo.store.kind != storage::RowStoreKind::kMemory) {
    FS_ASSIGN_OR_RETURN(out.dir, TempDir::Create(o.table_dir, "foresight-tables-"));
    eo.store.path = out.dir->path() + (eo.store.kind == storage::RowStoreKind::kRocksDb ? "/tables" : "/tables.npy");
  }
  FS_ASSIGN_OR_RETURN(eo.cache.policy, cache::ParsePolicy(o.cache_policy));
  eo.cache.lookahead = o.EffectiveLookahead();
  // Disk and RocksDB tables read the next batch's rows while a step
  // computes (the runner keeps W + 1 batches enqueued after the current).
  eo.read_ahead = eo.store.kind == storage::RowStoreKind::kDisk || eo.store.kind == storage::RowStoreKind::kRocksDb;

  DlrmMemoryInputs mi;
  mi.data = &data;
  mi.options = &o;
  mi.baseline_bytes = baseline_rss;
  for (const autograd::Parameter* p : model.Parameters()) mi.parameters += p->value().numel();
  for (int64_t w : o.bottom_mlp) mi.activation_width += 2 * w;  // pre- and post-activation
  for (int64_t w : o.top_mlp) mi.activation_width += 2 * w;
  FS_ASSIGN_OR_RETURN(const kernels::Interaction interaction, kernels::ParseInteraction(o.interaction));
  mi.activation_width += data.num_dense() + 2 * data.num_fields() * o.embedding_dim +
                         kernels::InteractionWidth(interaction, data.num_fields(), o.bottom_mlp.back(),
                                                   o.embedding_dim);
  // A rank plans its cache for the rows it holds.
  std::unique_ptr<embed::EmbeddingSharding> sharding;
  if (sharded) {
    FS_ASSIGN_OR_RETURN(const embed::ShardingKind kind, embed::ParseShardingKind(o.sharding));
    FS_ASSIGN_OR_RETURN(embed::EmbeddingSharding plan,
                        embed::EmbeddingSharding::Make(kind, eo.table_rows, comm->size()));
    sharding = std::make_unique<embed::EmbeddingSharding>(std::move(plan));
  }
  for (int64_t r : sharded ? sharding->ShardRows(comm->rank()) : eo.table_rows) mi.table_rows += r;
  kernels::EmbeddingRowLayout layout;
  layout.dim = eo.dim;
  layout.optimizer = eo.optimizer;
  mi.row_bytes = layout.row_bytes();
  // Rows on one 4 KiB block of the disk store (.npy data starts block
  // aligned): with the lookahead policy a miss's read also brings the
  // rows of its block that the window needs (CacheConfig::page_rows).
  constexpr int64_t kBlock = 4096;
  if (eo.store.kind == storage::RowStoreKind::kDisk && o.page_companions == "on" && mi.row_bytes <= kBlock / 2 &&
      kBlock % mi.row_bytes == 0) {
    eo.cache.page_rows = kBlock / mi.row_bytes;
  }
  const MemoryEstimate estimate = EstimateDlrmMemory(mi);
  FS_ASSIGN_OR_RETURN(out.cache_bytes, PlanDlrmCacheBytes(o, estimate, mi.row_bytes));
  if (TableUsesWindowIndex(o)) eo.cache.window_index_keys = out.cache_bytes / mi.row_bytes + DlrmWindowKeys(o, data);
  if (o.memory_budget > 0) {
    FS_LOG(INFO) << "memory plan: " << estimate.Describe() << "; table cache " << FormatBytes(out.cache_bytes);
  }
  eo.cache.capacity_bytes = out.cache_bytes;
  if (sharded) {
    FS_ASSIGN_OR_RETURN(out.sharded, embed::ShardedEmbeddingBags::Open(eo, sharding->kind(), comm));
  } else {
    FS_ASSIGN_OR_RETURN(out.tables, embed::EmbeddingBagCollection::Open(eo));
  }
  embed::EmbeddingBagCollection* local = out.local();
  if (eo.cache.policy == cache::Policy::kStatic && !local->table()->direct()) {
    const int rank = sharded ? comm->rank() : 0;
    std::vector<int64_t> position(static_cast<size_t>(data.num_fields()), -1);  // a table's place among this rank's
    const std::vector<int64_t> mine = sharded ? sharding->TablesOf(rank) : std::vector<int64_t>();
    for (size_t i = 0; i < mine.size(); ++i) position[mine[i]] = static_cast<int64_t>(i);
    auto key_of = [&](int64_t table, int64_t id) -> int64_t {
      if (!sharded) return local->Key(table, id);
      if (sharding->Owner(table, id) != rank) return -1;
      return local->Key(position[table], sharding->LocalId(id));
    };
    FS_RETURN_IF_ERROR(local->table()->SetStaticKeys(StaticKeys(data, key_of)));
  }
  return out;
}

}  // namespace foresight::trainer::internal
