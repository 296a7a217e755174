// EmbeddingBagCollection: T embedding tables of one dim, dtype and sparse
// optimizer in one flat layout (table t's row r is key offset_t + r of one
// EmbeddingTable, or (t << 40) | r for dynamic tables), pooled per sample
// and table by the embedding-bag kernels, and trained by the fused
// backward + update. It is the sparse half of DLRM and serves any model
// that looks rows up by id (link-prediction node embeddings, sequence
// models' item tables).
//
// A batch of B samples: ids and offsets as the kernels take them (bags
// table-major: bag t*B + b is sample b of table t; offsets [T*B + 1]);
// out [B, T*dim]. Per step:
//   Enqueue(ids, offsets)           the batch W steps ahead (lookahead)
//   Forward(ctx, psw, &out)         the oldest enqueued batch
//   BackwardUpdate(ctx, opt, grad)  its fused update (rows written back by
//                                   the cache); a Forward with no
//                                   BackwardUpdate (evaluation) is released
//                                   by the next Forward or Flush
// Thread safety: none (one owner); kernels run on ctx.pool.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "foresight/autograd/tape.h"
#include "foresight/embed/embedding_table.h"

namespace foresight::embed {

struct EmbeddingBagCollectionOptions {
  // Rows of each table; all 0 for dynamic tables (rocksdb: ids are any
  // value in [0, 2^40)).
  std::vector<int64_t> table_rows;
  int64_t dim = 0;
  DType dtype = DType::kF32;  // Default: f32
  kernels::SparseOptimizer optimizer = kernels::SparseOptimizer::kSgd;
  kernels::Pooling pooling = kernels::Pooling::kSum;
  // Default scale per table: 1/sqrt(its rows) (0.01 when dynamic).
  EmbeddingInit init;
  storage::RowStoreOptions store;  // as EmbeddingTableOptions::store
  cache::CacheConfig cache;        // as EmbeddingTableOptions::cache
  bool read_ahead = false;         // as EmbeddingTableOptions::read_ahead (Default: false)
  // A shard of a larger collection (sharded_embedding_bags.h): row `id` of
  // table t here starts as the larger collection's key init_key(t, id),
  // with the default scale of init_rows[t] rows. Default (null, empty):
  // this collection's own keys and table_rows (dense tables only).
  std::function<int64_t(int64_t table, int64_t id)> init_key;
  std::vector<int64_t> init_rows;
};

class EmbeddingBagCollection {
 public:
  static constexpr int kDynamicIdBits = 40;

  static StatusOr<std::unique_ptr<EmbeddingBagCollection>> Open(const EmbeddingBagCollectionOptions& options);

  int64_t num_tables() const { return static_cast<int64_t>(options_.table_rows.size()); }
  int64_t table_rows(int64_t table) const { return options_.table_rows[static_cast<size_t>(table)]; }
  int64_t dim() const { return options_.dim; }
  const kernels::EmbeddingRowLayout& layout() const { return table_->layout(); }
  // The flat table under the collection (its store, planner and counters).
  EmbeddingTable* table() const { return table_.get(); }
  // The flat key of `id` in table t.
  int64_t Key(int64_t table, int64_t id) const;

  // ids i32/i64 [N], offsets i64 [T*B + 1] (host). Ids out of their table's
  // range are OutOfRange naming position, sample and table.
  Status Enqueue(const Tensor& ids, const Tensor& offsets);
  void Close();
  // Pools the oldest enqueued batch into out [B, T*dim] (f32, host).
  // per_sample_weights: undefined, or f32 [N] (sum pooling).
  Status Forward(const ExecContext& ctx, const Tensor& per_sample_weights, Tensor* out);
  // The fused backward + update of the last Forward's batch from grad_out
  // [B, T*dim]; then its rows are released to the cache.
  Status BackwardUpdate(const ExecContext& ctx, const kernels::SparseOptimizerConfig& config, const Tensor& grad_out);
  // Forward on a tape (tape->ctx()): the pooled output as a Var whose
  // backward node is the fused update with `config` (the rows are written
  // when the tape's Backward reaches it; set config.step per step for
  // Adam). On a tape that does not record (evaluation) it is Forward only.
  // The node refers to this collection, which must outlive the Backward.
  StatusOr<autograd::Var> Forward(autograd::Tape* tape, const Tensor& per_sample_weights,
                                  const kernels::SparseOptimizerConfig& config);
  // Releases a forward-only batch, writes every dirty row back, syncs.
  Status Flush();
  // The embedding of `id` in table t (flushes first): dim floats.
  Status ReadEmbedding(int64_t table, int64_t id, float* out);

 private:
  explicit EmbeddingBagCollection(const EmbeddingBagCollectionOptions& options) : options_(options) {}
  Status ReleaseCurrent(bool wrote);

  struct Pending {
    Tensor ids, offsets;
  };

  EmbeddingBagCollectionOptions options_;
  bool dynamic_ = false;
  std::vector<int64_t> offsets_;  // flat key of each table's row 0 (dense)
  Tensor table_offsets_;          // i64 [T + 1] (direct mode)
  std::unique_ptr<EmbeddingTable> table_;
  std::deque<Pending> pending_;
  // The batch between Forward and BackwardUpdate.
  bool out_ = false;
  Pending current_;
  Tensor current_psw_;
  RowBatch rows_;
  // The tape input standing for the tables' rows (they are updated in
  // place by the backward node, never given a dense gradient).
  autograd::Var sparse_rows_;
};

}  // namespace foresight::embed
