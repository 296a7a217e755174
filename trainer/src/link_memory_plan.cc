#include "link_memory_plan.h"

#include <algorithm>
#include <string>

#include "foresight/embed/embedding_sharding.h"
#include "table_memory_plan.h"

namespace foresight::trainer::internal {

int64_t LinkBatchIds(const TrainOptions& o, int64_t num_train) {
  const int64_t b = std::max<int64_t>(1, std::min(o.batch_size, num_train));
  const int64_t c = o.negative_chunk > 0 ? std::min(o.negative_chunk, b) : b;
  return 2 * b + 2 * ((b + c - 1) / c) * o.negatives;
}

int64_t LinkWindowKeys(const TrainOptions& o, int64_t num_train) {
  return (static_cast<int64_t>(o.EffectiveLookahead()) + 3) * LinkBatchIds(o, num_train);
}

LinkPart LargestLinkPart(const TrainOptions& o, int64_t num_train, int ranks) {
  const int64_t b = std::max<int64_t>(1, std::min(o.batch_size, num_train));
  const int64_t c = o.negative_chunk > 0 ? std::min(o.negative_chunk, b) : b;
  const int64_t chunks = (b + c - 1) / c;
  LinkPart largest;
  for (int r = 0; r < ranks; ++r) {  // as RankPartOfLinkBatch cuts a batch
    const int64_t c0 = embed::RankPartBegin(chunks, r, ranks), n = embed::RankPartSize(chunks, r, ranks);
    LinkPart p;
    p.positives = std::min(b, (c0 + n) * c) - std::min(b, c0 * c);
    p.entity_ids = 2 * p.positives + 2 * n * o.negatives;
    if (p.entity_ids > largest.entity_ids) largest = p;
  }
  return largest;
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
  // A rank's shard sees its rows' ids of the whole batch: at most all of
  // them, so its window and bypass rows are planned as one rank's.
  AddTableStoreItems(o, in.entity_rows, in.row_bytes, LinkWindowKeys(o, m), &e);
  add("relation table", in.relation_rows * in.row_bytes, MemoryScale::kFixed);
  // The window's batches and the one being trained: the triples (head,
  // relation, tail and the relation keys), the entity keys, and their keys
  // and inverse in the table's queue.
  const int64_t b = std::min(o.batch_size, m);
  const int64_t ids = LinkBatchIds(o, m);
  add("lookahead batches", (static_cast<int64_t>(o.EffectiveLookahead()) + 2) * (ids * 8 * 3 + b * 8 * 5), MemoryScale::kBatch);
  // A batch's rows read around the cache, at most one per id.
  if (o.table_store != "memory" || o.cache_size > 0) add("bypass rows", ids * in.row_bytes, MemoryScale::kBatch);
  // The compute turn: a step's rows and gradients of the rank's part
  // ([ids, d] and the relations' [2B, d], twice: the host block cache
  // keeps a step's freed blocks for the next), or an evaluation's queries
  // (their rows and query vectors, [5 x rows, d], and per-query counters)
  // and one candidate block with its scores.
  const LinkPart part = LargestLinkPart(o, m, in.ranks);  // the whole batch on one rank
  const int64_t step = 2 * (2 * part.entity_ids * d * 4 + 2 * 2 * part.positives * d * 4 + part.entity_ids * 8);
  const int64_t q = std::max(lt.val().size(0), lt.test().size(0));
  constexpr int64_t kBlock = 8192, kQueryChunk = 512;  // link_eval.cc's
  int64_t eval = q * d * 4 * 6 + 2 * q * 48 + kBlock * (d * 4 + in.row_bytes + 8) + kQueryChunk * kBlock * 4;
  if (in.ranks > 1) {
    // Evaluation reads rows from their owners (ShardedEmbeddingBags::
    // ReadRows), a split's queries or a candidate block at once: the ids
    // asked and received, the owner's keys, its rows read whole and their
    // embeddings sent, and the answers received.
    eval += std::max(q, kBlock) * (3 * 8 + in.row_bytes + 2 * d * 4);
    // The sharded step's exchanges (embed::ShardedEmbeddingBags), the
    // entity and relation ids of a global batch (g) and of the largest
    // part (p). Rows: forward holds the shard's pooled rows of every bag
    // [g, d], those it returns (at most g) and the part's it receives (p);
    // backward the part's gradients it sends (p), those it receives (at
    // most g) and the global batch's gradient [g, d]: 2g + p rows at
    // once, twice (the block cache). Enqueue routes the part's ids with a
    // bag length per rank (twice: lists and their concatenation) and the
    // owner receives at most g ids and lengths and builds its batch's ids
    // and offsets. Each enqueued batch (W + 2) keeps a byte per bag and
    // rank of the part and per bag of the global batch.
    const int64_t relation_keys = o.reciprocal ? 2 : 1;
    const int64_t g = ids + b * relation_keys, p = part.entity_ids + part.positives * relation_keys;
    const int64_t n = in.ranks;
    add("exchanges (ids, rows, gradients)",
        2 * (2 * g + p) * d * 4 + (2 * n * p + 2 * p + 4 * g) * 8 + (o.EffectiveLookahead() + 2) * (g + n * p),
        MemoryScale::kBatch);
  }
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

int64_t LinkMinimumBudget(const TrainOptions& o, const MemoryEstimate& estimate, int64_t row_bytes) {
  return o.table_store == "memory" ? MinimumBudget(estimate, 0) : TableMinimumBudget(o, estimate, row_bytes);
}

LinkRankPlan PlanOfThisRank(const TrainOptions& o, const MemoryEstimate& estimate, int64_t row_bytes,
                            int64_t entity_rows) {
  LinkRankPlan plan;
  plan.entity_rows = entity_rows;
  plan.minimum_budget = LinkMinimumBudget(o, estimate, row_bytes);
  plan.cache_bytes = -1;
  if (o.memory_budget > 0) {
    const StatusOr<int64_t> cache = PlanLinkCacheBytes(o, estimate, row_bytes, entity_rows);
    if (cache.ok()) plan.cache_bytes = *cache;
  }
  return plan;
}

void WriteLinkPlan(const TrainOptions& o, const storage::LinkTriples& lt, const MemoryEstimate& e, int64_t row_bytes,
                   int rank, const std::vector<LinkRankPlan>& ranks, TrainSummary* out) {
  const bool memory = o.table_store == "memory";
  const bool sharded = ranks.size() > 1;
  out->minimum_budget_bytes = 0;
  for (const LinkRankPlan& r : ranks) out->minimum_budget_bytes = std::max(out->minimum_budget_bytes, r.minimum_budget);
  const std::string n = std::to_string(ranks.size());
  std::string text = "memory plan of " + o.dataset + " (" + std::to_string(lt.num_entities()) + " entities" +
                     (sharded ? " row-wise on " + n + " ranks, each under the whole budget; the items of rank " +
                                    std::to_string(rank) + " (" +
                                    std::to_string(ranks[static_cast<size_t>(rank)].entity_rows) + " entities)"
                              : std::string()) +
                     ", " + std::to_string(o.batch_size) + " triples a batch, " + std::to_string(o.negatives) +
                     " negatives a chunk side, " + std::to_string(o.EffectiveLookahead()) + " batches of lookahead, " +
                     o.table_store + " entity store, rows of " + FormatBytes(row_bytes) + "):\n" +
                     e.Table("entity cache");
  if (o.memory_budget > 0 && !memory) {
    text += "entity cache under --memory-budget " + FormatBytes(o.memory_budget) + (sharded ? " a rank:" : ":");
    for (size_t r = 0; r < ranks.size(); ++r) {
      const int64_t cache = ranks[r].cache_bytes;
      text += std::string(r > 0 ? "," : "") + (sharded ? " rank " + std::to_string(r) : std::string()) + " " +
              (cache >= 0 ? FormatBytes(cache) + " (" + std::to_string(cache / row_bytes) +
                                (sharded ? " of " + std::to_string(ranks[r].entity_rows) : std::string()) + " rows)"
                          : std::string("none (below the minimum)"));
    }
    text += "\n";
  }
  text += "smallest --memory-budget this run accepts: " + FormatBytes(out->minimum_budget_bytes) +
          (sharded ? " a rank (the largest of the " + n + " ranks' minimums)" : std::string()) + "\n";
  out->memory_plan = text;
}

}  // namespace foresight::trainer::internal
