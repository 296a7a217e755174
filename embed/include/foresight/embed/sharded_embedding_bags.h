// ShardedEmbeddingBags: an EmbeddingBagCollection split across the ranks
// of a job (embedding_sharding.h: row-wise or table-wise). Each rank holds
// its shard as a collection of its own, on its own store behind its own
// lookahead cache, and takes its part of every global batch (samples
// [RankPartBegin, + RankPartSize) of the batch, as data-parallel training
// splits it). Per batch, all ranks together (each call is a collective:
// every rank makes it, in the same order, with the same global batch size):
//   Enqueue   ids of its part routed to their owners (all-to-all-v); an
//             owner's batch is its rows' ids of the whole global batch,
//             table-major in global sample order: the order one rank's
//             collection sees them in, so its lookahead window and its
//             fused update (duplicates summed in ascending position) are
//             those of one rank on the rows it owns
//   Forward   each owner pools its rows of every bag and returns the pooled
//             (table-wise) or partial (row-wise) sums of the bags it holds
//             ids of to the samples' ranks (all-to-all-v), which add the
//             partials in rank order (a bag with no id on an owner costs
//             no bytes: row-wise with one id a bag, 1/N of the bags each)
//   BackwardUpdate  each rank's gradient of its pooled part goes back to
//             the owners of those bags (all-to-all-v), which apply the fused sparse
//             optimizer to the global batch's gradient
// Sum pooling, dense tables, no per-sample weights. A shard's rows start
// from the values the unsharded collection gives them (same seed and keys).
// Thread safety: none; one owner drives it; kernels run on ctx.pool.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "foresight/core/communicator.h"
#include "foresight/embed/embedding_bag_collection.h"
#include "foresight/embed/embedding_sharding.h"

namespace foresight::embed {

class ShardedEmbeddingBags {
 public:
  // `options` describe the whole collection (table_rows: every table's
  // rows); store.path names this rank's shard's file or database. `comm`
  // outlives the object. Not collective.
  static StatusOr<std::unique_ptr<ShardedEmbeddingBags>> Open(const EmbeddingBagCollectionOptions& options,
                                                              ShardingKind kind, Communicator* comm);

  const EmbeddingSharding& sharding() const { return sharding_; }
  // This rank's rows: its tables (sharding().TablesOf(rank)), store, cache
  // and counters. Row `id` of its table t' is global row
  // sharding().GlobalId(rank, id) of table TablesOf(rank)[t'].
  EmbeddingBagCollection* shard() const { return shard_.get(); }
  int64_t num_tables() const { return sharding_.num_tables(); }
  int64_t dim() const { return options_.dim; }

  // Collective. This rank's part of a global batch of `global_batch`
  // samples: ids (i32/i64 [N]) and offsets (i64 [T*b + 1], b =
  // RankPartSize(global_batch, rank, ranks); bags table-major) as
  // EmbeddingBagCollection::Enqueue takes them. An id outside its table is
  // OutOfRange naming position, sample and table.
  Status Enqueue(const Tensor& ids, const Tensor& offsets, int64_t global_batch);
  // The same with parts of any sizes: rank r holds the parts[r] samples
  // after those of ranks < r (every rank passes the same parts; link
  // prediction splits a batch by chunks of positives and negatives).
  Status Enqueue(const Tensor& ids, const Tensor& offsets, std::vector<int64_t> parts);
  // No more batches (each rank's shard can then reach its last W).
  void Close() { shard_->Close(); }
  // Collective: this rank's pooled part [b, T*dim] (f32, allocated here) of
  // the oldest enqueued batch.
  Status Forward(const ExecContext& ctx, Tensor* out);
  // Collective: the fused update of the last Forward's batch from this
  // rank's gradient of its part, grad_out [b, T*dim] (f32).
  Status BackwardUpdate(const ExecContext& ctx, const kernels::SparseOptimizerConfig& config, const Tensor& grad_out);
  // Collective, outside a step (no Forward waiting for its BackwardUpdate):
  // the embeddings (dim floats each) of rows `ids` of table `table` into
  // `out`, read from their owners' shards (all-to-all-v both ways). Ranks
  // may ask for different ids; every rank calls it the same number of
  // times. An id outside the table is OutOfRange.
  Status ReadRows(int64_t table, const std::vector<int64_t>& ids, float* out);
  int64_t table_rows(int64_t table) const { return sharding_.table_rows()[static_cast<size_t>(table)]; }
  // This rank's shard: releases a forward-only batch, writes dirty rows back.
  Status Flush() { return shard_->Flush(); }

  // Time spent in this object's exchanges (waiting for peers included) and
  // bytes this rank sent, since Open.
  double exchange_seconds() const { return exchange_seconds_; }
  int64_t exchange_bytes() const { return exchange_bytes_; }

 private:
  ShardedEmbeddingBags(const EmbeddingBagCollectionOptions& options, EmbeddingSharding sharding, Communicator* comm)
      : options_(options), sharding_(std::move(sharding)), comm_(comm) {}
  Status Exchange(const Tensor& send, const std::vector<int64_t>& counts, Tensor* out,
                  std::vector<int64_t>* recv_counts);
  int64_t ShardTables(int rank) const { return static_cast<int64_t>(sharding_.TablesOf(rank).size()); }

  EmbeddingBagCollectionOptions options_;
  EmbeddingSharding sharding_;
  Communicator* comm_;
  std::unique_ptr<EmbeddingBagCollection> shard_;
  // An enqueued batch: its size, and which bags have ids on which rank.
  struct Batch {
    int64_t global_batch = -1;
    std::vector<int64_t> parts, begins;  // each rank's samples, and where they start
    // Per owner: 1 for each of this rank's bags (owner's tables x this
    // rank's samples, table-major) with ids on that owner.
    std::vector<std::vector<uint8_t>> sent;
    // This rank's bags (its tables x the global batch's samples,
    // table-major) with ids from their sample's rank.
    std::vector<uint8_t> held;
  };
  std::deque<Batch> pending_;
  Batch current_;  // the last Forward's (global_batch -1: none)
  double exchange_seconds_ = 0;
  int64_t exchange_bytes_ = 0;
};

}  // namespace foresight::embed
