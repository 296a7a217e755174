#include "link_memory_plan.h"

#include <algorithm>
#include <string>

#include "table_memory_plan.h"

namespace foresight::trainer::internal {

int64_t LinkBatchIds(const TrainOptions& o, int64_t num_train) {
  const int64_t b = std::max<int64_t>(1, std::min(o.batch_size, num_train));
  const int64_t c = o.negative_chunk > 0 ? std::min(o.negative_chunk, b) : b;
  return 2 * b + 2 * ((b + c - 1) / c) * o.negatives;
}

int64_t LinkWindowKeys(const TrainOptions& o, int64_t num_train) {
  return (static_cast<int64_t>(o.lookahead) + 3) * LinkBatchIds(o, num_train);
}

MemoryEstimate EstimateLinkMemory(const LinkMemoryInputs& in) {
  TrainOptions o = *in.options;
  if (o.table_store == "memory") o.cache_size = 0;  // its rows are read in place: no cache, no index
  const storage::LinkTriples& lt = *in.triples;
  const int64_t m = lt.train().size(0);
  const int64_t d = o.embedding_dim;
  MemoryEstimate e;
  auto add = [&](const std::string& name, int64_t bytes, MemoryScale scale) {
    e.items.push_back({name, std::max<int64_t>(0, bytes), scale});
  };
  add("baseline", in.baseline_bytes, MemoryScale::kFixed);
  // The mapped triples: Open checks every row, and training and the
  // filters read them all each epoch, so every page is resident.
  add("triples (mapped)", lt.train().nbytes() + lt.val().nbytes() + lt.test().nbytes(), MemoryScale::kGraph);
  // The batcher's visiting order of up to two epochs (the window spans an
  // epoch's end), and with bucket order its rows by bucket.
  add("epoch orders", (o.order == "buckets" ? 3 : 2) * m * 8, MemoryScale::kGraph);
  add("evaluation candidates and filters", in.evaluation_bytes, MemoryScale::kGraph);
  AddTableStoreItems(o, lt.num_entities(), in.row_bytes, LinkWindowKeys(o, m), &e);
  add("relation table", in.relation_rows * in.row_bytes, MemoryScale::kFixed);
  // The window's batches and the one being trained: the triples (head,
  // relation, tail and the relation keys), the entity keys, and their keys
  // and inverse in the table's queue.
  const int64_t b = std::min(o.batch_size, m);
  const int64_t ids = LinkBatchIds(o, m);
  add("lookahead batches", (static_cast<int64_t>(o.lookahead) + 2) * (ids * 8 * 3 + b * 8 * 5), MemoryScale::kBatch);
  // A batch's rows read around the cache, at most one per id.
  if (o.table_store != "memory" || o.cache_size > 0) add("bypass rows", ids * in.row_bytes, MemoryScale::kBatch);
  // The compute turn: a step's rows and gradients ([ids, d] and the
  // relations' [2B, d], twice: the host block cache keeps a step's freed
  // blocks for the next), or an evaluation's queries (their rows and query
  // vectors, [5 x rows, d], and per-query counters) and one candidate
  // block with its scores.
  const int64_t step = 2 * (2 * ids * d * 4 + 2 * 2 * b * d * 4 + ids * 8);
  const int64_t q = std::max(lt.val().size(0), lt.test().size(0));
  constexpr int64_t kBlock = 8192, kQueryChunk = 512;  // link_eval.cc's
  const int64_t eval = q * d * 4 * 6 + 2 * q * 48 + kBlock * (d * 4 + in.row_bytes + 8) + kQueryChunk * kBlock * 4;
  if (step >= eval) {
    add("compute turn (training step)", step, MemoryScale::kBatch);
  } else {
    add("compute turn (evaluation)", eval, MemoryScale::kGraph);
  }
  return e;
}

StatusOr<int64_t> PlanLinkCacheBytes(const TrainOptions& o, const MemoryEstimate& estimate, int64_t row_bytes,
                                     int64_t num_entities) {
  if (o.table_store == "memory") {
    // Every row is an item of the estimate; there is no cache to shrink.
    if (o.memory_budget > 0 && estimate.total() > o.memory_budget) {
      return ResourceExhausted("memory_budget: " + FormatBytes(o.memory_budget) + " cannot hold the run's estimated " +
                               estimate.Describe() + "; the smallest --memory-budget that works is " +
                               FormatBytes(MinimumBudget(estimate, 0)) + "; or use --table-store disk");
    }
    return int64_t{0};
  }
  FS_ASSIGN_OR_RETURN(const int64_t cache, PlanTableCacheBytes(o, estimate, row_bytes,
                                                               "lower --batch-size, --negatives or --lookahead"));
  return std::min(cache, num_entities * row_bytes);
}

}  // namespace foresight::trainer::internal
