// TrainLinkSharded (link_trainer.h): the shallow link models on several
// ranks. Every rank makes the one-rank run's global batches (the batcher is
// keyed by seed, epoch and batch) and takes the chunks RankPartBegin gives
// it of each: their positives and negatives (RankPartOfLinkBatch). The
// entity and relation rows are split row-wise across the ranks as
// embed::ShardedEmbeddingBags of one table each, a bag of one id per row a
// part reads: each rank's shard on its own store behind its own lookahead
// cache; the ids of a part go to their owners by all-to-all-v and the rows
// come back; the rows' gradients go back to the owners, whose fused sparse
// optimizer sums the duplicates of the whole global batch. The loss of a
// part is scaled by the global batch (LinkBatch::loss_size), so the parts'
// gradients are the one-rank gradient's and their losses add up to its
// loss. Open plans each rank's memory (link_memory_plan.h: its shard's
// rows, its part of a batch and the exchanges, under the whole
// --memory-budget) and sizes its entity cache from it; a budget below the
// largest rank's minimum is refused on every rank with that minimum.
// Evaluation reads rows from their owners (ShardedEmbeddingBags::
// ReadRows) and ranks on every rank alike; rank 0 writes metrics and the
// export. Checkpoints: every rank saves its shards beside rank 0's pointer
// (link_checkpoint.h).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "foresight/core/logging.h"
#include "foresight/core/process_memory.h"
#include "foresight/core/thread_pool.h"
#include "foresight/embed/sharded_embedding_bags.h"
#include "foresight/storage/link_triples.h"
#include "link_batches.h"
#include "lookahead_window.h"
#include "link_checkpoint.h"
#include "link_epochs.h"
#include "link_eval.h"
#include "link_export.h"
#include "link_loss.h"
#include "link_memory_plan.h"
#include "link_scorer.h"
#include "link_tables.h"
#include "link_trainer.h"
#include "table_memory_plan.h"
#include "temp_dir.h"

namespace foresight::trainer::internal {

LinkBatch RankPartOfLinkBatch(const LinkBatch& b, int rank, int ranks) {
  LinkBatch p;
  p.epoch = b.epoch;
  p.index = b.index;
  p.chunk = b.chunk;
  p.negatives = b.negatives;
  p.loss_size = b.loss_size > 0 ? b.loss_size : b.size;
  const int64_t c0 = embed::RankPartBegin(b.num_chunks, rank, ranks);
  p.num_chunks = embed::RankPartSize(b.num_chunks, rank, ranks);
  const int64_t p0 = std::min(b.size, c0 * b.chunk), p1 = std::min(b.size, (c0 + p.num_chunks) * b.chunk);
  p.size = p1 - p0;
  const auto slice = [](const std::vector<int64_t>& v, int64_t from, int64_t to, std::vector<int64_t>* out) {
    out->insert(out->end(), v.begin() + from, v.begin() + to);
  };
  slice(b.heads, p0, p1, &p.heads);
  slice(b.relations, p0, p1, &p.relations);
  slice(b.tails, p0, p1, &p.tails);
  slice(b.relation_keys, p0, p1, &p.relation_keys);
  if (static_cast<int64_t>(b.relation_keys.size()) == 2 * b.size) {  // reciprocal: the reverse rows
    slice(b.relation_keys, b.size + p0, b.size + p1, &p.relation_keys);
  }
  slice(b.entity_keys, p0, p1, &p.entity_keys);                    // heads
  slice(b.entity_keys, b.size + p0, b.size + p1, &p.entity_keys);  // tails
  for (int64_t c = c0; c < c0 + p.num_chunks; ++c) {               // tail, head negatives
    slice(b.entity_keys, b.TailNegatives(c), b.TailNegatives(c) + 2 * b.negatives, &p.entity_keys);
  }
  return p;
}

namespace {

// One id a bag: offsets 0..n.
Tensor OneIdBags(int64_t n) {
  Tensor offsets = Tensor::Empty({n + 1}, DType::kI64);
  for (int64_t i = 0; i <= n; ++i) offsets.data<int64_t>()[i] = i;
  return offsets;
}

Tensor IdsOf(const std::vector<int64_t>& keys) {
  Tensor t = Tensor::Empty({static_cast<int64_t>(keys.size())}, DType::kI64);
  if (!keys.empty()) std::memcpy(t.data<int64_t>(), keys.data(), keys.size() * sizeof(int64_t));
  return t;
}

class ShardedLinkTrainer : public LinkModel {
 public:
  ShardedLinkTrainer(const TrainOptions& o, const ExecContext& ctx, const storage::LinkTriples& lt, LinkScorer scorer,
                     Communicator* comm)
      : o_(o), ctx_(ctx), lt_(lt), scorer_(scorer), comm_(comm), batcher_(lt, o), known_(lt.num_relations()) {}

  // Plans this rank's memory (baseline_rss: its RSS before the triples
  // were opened), then opens its shards with the entity cache the plan
  // leaves; with plan_only, writes the plan to `plan_out` and opens
  // nothing. Collective.
  Status Open(int64_t baseline_rss, TrainSummary* plan_out) {
    // Row-wise, every rank owns rows of both tables.
    const int ranks = comm_->size(), rank = comm_->rank();
    const int64_t relation_rows = std::max<int64_t>(lt_.num_relations(), 1) * (o_.reciprocal ? 2 : 1);
    if (relation_rows < ranks || lt_.num_entities() < ranks) {
      return Unimplemented("link prediction on " + std::to_string(ranks) + " ranks: " + o_.dataset + " has " +
                           std::to_string(lt_.num_entities()) + " entity and " + std::to_string(relation_rows) +
                           " relation rows" + (o_.reciprocal ? " (with the reverse rows)" : "") +
                           "; row-wise sharding gives each rank some rows of both, so run on at most " +
                           std::to_string(std::min(relation_rows, lt_.num_entities())) + " ranks");
    }
    BuildSplitEvaluations(ctx_, lt_, o_.eval_negatives, o_.seed, &known_, eval_);
    FS_ASSIGN_OR_RETURN(const kernels::SparseOptimizer opt, kernels::ParseSparseOptimizer(o_.sparse_optimizer));
    FS_ASSIGN_OR_RETURN(const embed::EmbeddingSharding sharding,
                        embed::EmbeddingSharding::Make(embed::ShardingKind::kRow,
                                                       {lt_.num_entities(), relation_rows}, ranks));
    const std::vector<int64_t> shard_rows = sharding.ShardRows(rank);  // entities, relations
    kernels::EmbeddingRowLayout layout;
    layout.dim = o_.embedding_dim;
    layout.optimizer = opt;
    LinkMemoryInputs mi;
    mi.triples = &lt_;
    mi.options = &o_;
    mi.baseline_bytes = baseline_rss;
    mi.row_bytes = layout.row_bytes();
    mi.entity_rows = shard_rows[0];
    mi.relation_rows = shard_rows[1];
    mi.ranks = ranks;
    mi.evaluation_bytes = eval_[0].bytes() + eval_[1].bytes();
    const MemoryEstimate estimate = EstimateLinkMemory(mi);
    // Every rank's outcome, so that each reports and refuses alike.
    const LinkRankPlan own = PlanOfThisRank(o_, estimate, mi.row_bytes, mi.entity_rows);
    Tensor send = Tensor::Empty({3}, DType::kI64), got;
    send.data<int64_t>()[0] = own.entity_rows;
    send.data<int64_t>()[1] = own.minimum_budget;
    send.data<int64_t>()[2] = own.cache_bytes;
    FS_RETURN_IF_ERROR(comm_->AllGather(send, &got));
    std::vector<LinkRankPlan> plans(static_cast<size_t>(ranks));
    int largest = 0;
    for (int r = 0; r < ranks; ++r) {
      const int64_t* g = got.data<int64_t>() + 3 * r;
      plans[static_cast<size_t>(r)] = {g[0], g[1], g[2]};
      if (g[1] > plans[static_cast<size_t>(largest)].minimum_budget) largest = r;
    }
    if (o_.plan_only) {
      if (plan_out == nullptr) return Internal("plan_only: no summary to write the plan to");
      WriteLinkPlan(o_, lt_, estimate, mi.row_bytes, rank, plans, plan_out);
      return Status::OK();
    }
    const int64_t minimum = plans[static_cast<size_t>(largest)].minimum_budget;
    if (o_.memory_budget > 0 && o_.memory_budget < minimum) {
      return ResourceExhausted(
          "memory_budget: " + FormatBytes(o_.memory_budget) + " a rank cannot hold the minimum of rank " +
          std::to_string(largest) + " of " + std::to_string(ranks) + " (this rank's estimate: " +
          estimate.Describe() + "); the smallest --memory-budget that works is " + FormatBytes(minimum) +
          " (per rank); or lower --batch-size, --negatives or --lookahead" +
          (o_.table_store == "memory" ? ", or use --table-store disk" : ""));
    }
    // This rank's entity cache, at most its shard.
    FS_ASSIGN_OR_RETURN(const int64_t cache_bytes,
                        PlanLinkCacheBytes(o_, estimate, mi.row_bytes, mi.entity_rows));
    if (o_.memory_budget > 0) {
      FS_LOG(INFO) << "memory plan: " << estimate.Describe() << "; entity cache " << FormatBytes(cache_bytes)
                   << " (" << cache_bytes / mi.row_bytes << " of " << mi.entity_rows << " rows)";
    }
    embed::EmbeddingBagCollectionOptions eo;
    eo.table_rows = {lt_.num_entities()};
    SetLinkEntityTableOptions(o_, opt, &eo);
    if (o_.table_store == "disk") {
      eo.cache.capacity_bytes = cache_bytes;
      if (TableUsesWindowIndex(o_)) {
        // The shard's keys of the window are at most the batches' (as planned).
        eo.cache.window_index_keys = cache_bytes / mi.row_bytes + LinkWindowKeys(o_, lt_.train().size(0));
      }
      FS_ASSIGN_OR_RETURN(scratch_, TempDir::Create(o_.table_dir, "foresight-link-"));
      eo.store.kind = storage::RowStoreKind::kDisk;
      eo.store.path = scratch_->path() + "/entities.rank-" + std::to_string(rank) + ".npy";
      eo.store.io_depth = o_.io_depth;
    }
    FS_ASSIGN_OR_RETURN(entities_, embed::ShardedEmbeddingBags::Open(eo, embed::ShardingKind::kRow, comm_));
    embed::EmbeddingBagCollectionOptions ro = LinkRelationTableOptions(o_, eo);
    ro.table_rows = {relation_rows};
    FS_ASSIGN_OR_RETURN(relations_, embed::ShardedEmbeddingBags::Open(ro, embed::ShardingKind::kRow, comm_));
    config_.kind = opt;
    config_.lr = o_.sparse_lr;
    config_.weight_decay = o_.weight_decay;
    window_.set_total(static_cast<int64_t>(o_.epochs) * batcher_.batches_per_epoch());
    return Status::OK();
  }

  Status TrainEpoch(int epoch, const TrainCallbacks& callbacks, double* loss, int64_t* hits,
                    int64_t* misses) override {
    const cache::CacheCounters before = Counters();
    double sum = 0.0;
    const int64_t n = batcher_.batches_per_epoch();
    for (int64_t b = 0; b < n; ++b) {
      FS_RETURN_IF_ERROR(FillWindow());
      LinkBatch part;
      FS_RETURN_IF_ERROR(window_.Take(epoch, b, &part));
      double l = 0.0;
      FS_RETURN_IF_ERROR(Step(part, &l));
      sum += l;
      if (callbacks.on_batch) callbacks.on_batch(epoch + 1, b, n, l);
    }
    *loss = sum / static_cast<double>(n);
    const cache::CacheCounters after = Counters();
    int64_t counts[2] = {after.hits - before.hits, after.misses - before.misses};
    FS_RETURN_IF_ERROR(comm_->AllReduceSum(counts, 2));  // every rank's cache
    *hits = counts[0];
    *misses = counts[1];
    return Status::OK();
  }

  Status Evaluate(const Tensor& triples, RankMetrics* out, uint64_t draw) override {
    // Collective reads: every rank ranks the same queries in the same order.
    const auto read = [](embed::ShardedEmbeddingBags* table) {
      return [table](const std::vector<int64_t>& keys, float* rows) { return table->ReadRows(0, keys, rows); };
    };
    const SplitEvaluation& s = eval_[draw];
    return EvaluateRanking(ctx_, scorer_, read(entities_.get()), read(relations_.get()), lt_.num_entities(), triples,
                           s.filter, s.candidates, out, o_.reciprocal ? lt_.num_relations() : 0);
  }

  Status Export(const std::string& dir) override {
    const auto read = [](embed::ShardedEmbeddingBags* table) {
      return [table](const std::vector<int64_t>& keys, float* rows) { return table->ReadRows(0, keys, rows); };
    };
    return ExportLinkEmbeddings(o_, lt_, read(entities_.get()), read(relations_.get()), relations_->table_rows(0),
                                /*write=*/comm_->rank() == 0, dir);
  }

  Status Restore(const std::string& dir, const LinkCheckpointState& state) override {
    FS_RETURN_IF_ERROR(CheckShardedLinkCheckpoint(dir, state, comm_->size(), lt_.num_entities(),
                                                  relations_->table_rows(0),
                                                  entities_->shard()->layout().row_width()));
    FS_RETURN_IF_ERROR(LoadLinkCheckpointShard(dir, state, comm_->rank(), entities_->shard()->table(),
                                               relations_->shard()->table()));
    step_ = state.steps;
    window_.set_next(static_cast<int64_t>(state.epoch) * batcher_.batches_per_epoch());
    return Status::OK();
  }

  Status Save(const std::string& dir, LinkCheckpointState* state) override {
    state->steps = step_;
    state->entity_rows = lt_.num_entities();
    state->relation_rows = relations_->table_rows(0);
    state->row_width = entities_->shard()->layout().row_width();
    return SaveLinkCheckpointShards(dir, entities_->shard()->table(), relations_->shard()->table(), comm_, state);
  }

 private:
  cache::CacheCounters Counters() const {
    const cache::CachePlanner* planner = entities_->shard()->table()->planner();
    return planner != nullptr ? planner->counters() : cache::CacheCounters();
  }

  // Enqueues this rank's parts of the batches until the shards see W
  // batches beyond the next one, or all of them. Collective.
  Status FillWindow() {
    return window_.Fill(
        batcher_, o_.EffectiveLookahead(),
        [this](LinkBatch* whole) {
          const int ranks = comm_->size();
          std::vector<int64_t> entity_parts(static_cast<size_t>(ranks)), relation_parts(static_cast<size_t>(ranks));
          LinkBatch mine;
          for (int r = 0; r < ranks; ++r) {
            LinkBatch part = RankPartOfLinkBatch(*whole, r, ranks);
            entity_parts[static_cast<size_t>(r)] = static_cast<int64_t>(part.entity_keys.size());
            relation_parts[static_cast<size_t>(r)] = static_cast<int64_t>(part.relation_keys.size());
            if (r == comm_->rank()) mine = std::move(part);
          }
          *whole = std::move(mine);  // the window keeps this rank's part
          FS_RETURN_IF_ERROR(entities_->Enqueue(IdsOf(whole->entity_keys),
                                                OneIdBags(static_cast<int64_t>(whole->entity_keys.size())),
                                                entity_parts));
          return relations_->Enqueue(IdsOf(whole->relation_keys),
                                     OneIdBags(static_cast<int64_t>(whole->relation_keys.size())), relation_parts);
        },
        [this] {
          entities_->Close();
          relations_->Close();
        });
  }

  // One step of this rank's part; *loss is the global batch's (summed over
  // the ranks). Collective.
  Status Step(const LinkBatch& part, double* loss) {
    const int64_t d = o_.embedding_dim;
    Tensor e, r;
    FS_RETURN_IF_ERROR(entities_->Forward(ctx_, &e));
    FS_RETURN_IF_ERROR(relations_->Forward(ctx_, &r));
    Tensor de = Tensor::Zeros({e.size(0), d}, DType::kF32), dr = Tensor::Zeros({r.size(0), d}, DType::kF32);
    double l = 0.0;
    if (part.size > 0) {
      FS_RETURN_IF_ERROR(LinkBatchLoss(ctx_, o_, scorer_, lt_.num_entities(), part, e, r, &de, &dr, &l));
    }
    FS_RETURN_IF_ERROR(comm_->AllReduceSum(&l, 1));
    *loss = l;
    ++step_;
    config_.step = step_;
    FS_RETURN_IF_ERROR(entities_->BackwardUpdate(ctx_, config_, de));
    // A relation-free scorer (dot) leaves the relation rows as they are:
    // their forward-only batch is released (evaluation reads the shard).
    if (scorer_.uses_relation()) {
      FS_RETURN_IF_ERROR(relations_->BackwardUpdate(ctx_, config_, dr));
    } else {
      FS_RETURN_IF_ERROR(relations_->Flush());
    }
    return Status::OK();
  }

  const TrainOptions& o_;
  ExecContext ctx_;
  const storage::LinkTriples& lt_;
  LinkScorer scorer_;
  Communicator* comm_;
  LinkBatcher batcher_;
  KnownTriples known_;
  SplitEvaluation eval_[2];  // validation, test
  std::unique_ptr<TempDir> scratch_;
  std::unique_ptr<embed::ShardedEmbeddingBags> entities_, relations_;
  kernels::SparseOptimizerConfig config_;
  LookaheadWindow<LinkBatch> window_;  // this rank's parts
  int64_t step_ = 0;
};

}  // namespace

Status TrainLinkSharded(const TrainOptions& o, const TrainCallbacks& callbacks, Communicator* comm,
                        TrainSummary* out) {
  ThreadPool pool(o.threads);
  const ExecContext ctx = CpuContext(o.seed, &pool);
  const int64_t baseline_rss = CurrentRssBytes();
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::LinkTriples> lt, storage::LinkTriples::Open(o.dataset));
  FS_ASSIGN_OR_RETURN(LinkScorer scorer, LinkScorer::Create(o.model, o.embedding_dim, o.margin));
  ShardedLinkTrainer trainer(o, ctx, *lt, scorer, comm);
  FS_RETURN_IF_ERROR(trainer.Open(baseline_rss, out));
  if (o.plan_only) return Status::OK();
  return RunLinkEpochs(o, *lt, trainer, callbacks, out, comm);
}

}  // namespace foresight::trainer::internal
