// TrainLink (link_trainer.h): shallow link prediction as a LinkModel run
// by RunLinkEpochs (link_epochs.h), the epoch loop every link model shares.
// Open plans the memory (link_memory_plan.h) and sizes the entity cache
// from it. A step: acquire the batch's entity rows (positives and the chunks'
// negatives, planned W batches ahead by the lookahead cache) and relation
// rows, copy the embeddings out, score each chunk and side with one GEMM,
// backpropagate the loss and regulariser into per-position gradients, then
// update every touched row once with the fused sparse optimizer (gradients
// of repeated rows summed in a fixed order) and release the rows.
#include "link_trainer.h"

#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/core/logging.h"
#include "foresight/core/process_memory.h"
#include "foresight/core/thread_pool.h"
#include "foresight/embed/embedding_table.h"
#include "foresight/kernels/ops.h"
#include "foresight/storage/dataset.h"
#include "foresight/storage/link_triples.h"
#include "foresight/storage/npy.h"
#include "link_batches.h"
#include "lookahead_window.h"
#include "link_checkpoint.h"
#include "temp_dir.h"
#include "link_epochs.h"
#include "link_eval.h"
#include "link_export.h"
#include "link_loss.h"
#include "link_memory_plan.h"
#include "link_scorer.h"
#include "link_tables.h"
#include "table_memory_plan.h"

namespace foresight::trainer::internal {
namespace {

// Copies the embeddings (the first dim floats of each row) of a batch's
// positions out of its rows.
void GatherEmbeddings(const ExecContext& ctx, const embed::RowBatch& b, int64_t dim, Tensor* out) {
  const int64_t width = b.rows.size(1);
  const float* rows = b.rows.data<float>();
  const int64_t* local = b.local_ids.data<int64_t>();
  float* o = out->data<float>();
  ctx.pool->ParallelFor(out->size(0), 256, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) std::memcpy(o + i * dim, rows + local[i] * width, sizeof(float) * dim);
  });
}

// Applies grad [K, dim] (one row per position of the batch) to the batch's
// rows with the table's optimizer.
Status UpdateRows(const ExecContext& ctx, const embed::EmbeddingTable& table,
                  const kernels::SparseOptimizerConfig& config, const Tensor& grad, embed::RowBatch* b) {
  const int64_t k = grad.size(0);
  Tensor offsets = Tensor::Empty({k + 1}, DType::kI64);
  int64_t* o = offsets.data<int64_t>();
  for (int64_t i = 0; i <= k; ++i) o[i] = i;
  return kernels::EmbeddingBagBackwardUpdate(ctx, table.layout(), config, Tensor(), b->local_ids, offsets, Tensor(),
                                             kernels::Pooling::kSum, grad, &b->rows);
}

class LinkTrainer : public LinkModel {
 public:
  LinkTrainer(const TrainOptions& o, const ExecContext& ctx, const storage::LinkTriples& lt, LinkScorer scorer)
      : o_(o), ctx_(ctx), lt_(lt), scorer_(scorer), batcher_(lt, o), known_(lt.num_relations()) {}

  // Plans the memory (the splits' filters first: their bytes are
  // measured), then opens the tables with the cache the plan leaves; with
  // plan_only, writes the plan to `plan_out` and opens nothing.
  Status Open(int64_t baseline_rss, TrainSummary* plan_out) {
    BuildSplitEvaluations(ctx_, lt_, o_.eval_negatives, o_.seed, &known_, eval_);
    FS_ASSIGN_OR_RETURN(const kernels::SparseOptimizer opt, kernels::ParseSparseOptimizer(o_.sparse_optimizer));
    embed::EmbeddingTableOptions eo;
    eo.rows = lt_.num_entities();
    SetLinkEntityTableOptions(o_, opt, &eo);
    kernels::EmbeddingRowLayout layout;
    layout.dim = eo.dim;
    layout.optimizer = opt;
    const int64_t relation_rows = std::max<int64_t>(lt_.num_relations(), 1) * (o_.reciprocal ? 2 : 1);
    LinkMemoryInputs mi;
    mi.triples = &lt_;
    mi.options = &o_;
    mi.baseline_bytes = baseline_rss;
    mi.row_bytes = layout.row_bytes();
    mi.entity_rows = lt_.num_entities();
    mi.relation_rows = relation_rows;
    mi.evaluation_bytes = eval_[0].bytes() + eval_[1].bytes();
    const MemoryEstimate estimate = EstimateLinkMemory(mi);
    if (o_.plan_only) {
      // The itemised plan, the cache a given budget leaves, and the
      // smallest budget the run accepts.
      if (plan_out == nullptr) return Internal("plan_only: no summary to write the plan to");
      WriteLinkPlan(o_, lt_, estimate, mi.row_bytes, 0, {PlanOfThisRank(o_, estimate, mi.row_bytes, mi.entity_rows)},
                    plan_out);
      return Status::OK();
    }
    FS_ASSIGN_OR_RETURN(const int64_t cache_bytes,
                        PlanLinkCacheBytes(o_, estimate, mi.row_bytes, lt_.num_entities()));
    if (o_.memory_budget > 0) {
      FS_LOG(INFO) << "memory plan: " << estimate.Describe() << "; entity cache " << FormatBytes(cache_bytes);
    }
    eo.cache.capacity_bytes = cache_bytes;
    if (o_.table_store != "memory" && TableUsesWindowIndex(o_)) {
      eo.cache.window_index_keys = cache_bytes / mi.row_bytes + LinkWindowKeys(o_, lt_.train().size(0));
    }
    if (o_.table_store == "disk") {
      FS_ASSIGN_OR_RETURN(scratch_, TempDir::Create(o_.table_dir, "foresight-link-"));

      eo.store.kind = storage::RowStoreKind::kDisk;
      eo.store.path = scratch_->path() + "/entities.npy";
      eo.store.io_depth = o_.io_depth;
    }
    FS_ASSIGN_OR_RETURN(entities_, embed::EmbeddingTable::Open(eo));
    embed::EmbeddingTableOptions ro = LinkRelationTableOptions(o_, eo);
    ro.rows = relation_rows;
    FS_ASSIGN_OR_RETURN(relations_, embed::EmbeddingTable::Open(ro));
    config_.kind = opt;
    config_.lr = o_.sparse_lr;
    config_.weight_decay = o_.weight_decay;
    window_.set_total(static_cast<int64_t>(o_.epochs) * batcher_.batches_per_epoch());
    if (o_.order == "buckets") {
      FS_LOG(INFO) << "bucket order: " << o_.entity_partitions << " entity partitions, a buffer of "
                   << o_.resident_partitions << ": " << batcher_.partition_loads()
                   << " partition loads per epoch (lower bound " << batcher_.partition_loads_lower_bound() << ")";
    }
    return Status::OK();
  }

  int64_t batches_per_epoch() const { return batcher_.batches_per_epoch(); }
  int64_t steps() const { return step_; }

  // Continues a run from its checkpoint after `state.epoch` epochs: the
  // rows go into the stores before any batch is planned, and the next batch
  // is the first of epoch state.epoch (batches and negatives are functions
  // of seed, epoch and index, so nothing else needs restoring).
  Status Restore(const std::string& dir, const LinkCheckpointState& state) override {
    // LoadLinkCheckpoint checks the rank count and the tables' shapes.
    FS_RETURN_IF_ERROR(LoadLinkCheckpoint(dir, state, entities_.get(), relations_.get()));
    step_ = state.steps;
    window_.set_next(static_cast<int64_t>(state.epoch) * batcher_.batches_per_epoch());
    return Status::OK();
  }

  Status Save(const std::string& dir, LinkCheckpointState* state) override {
    state->steps = step_;
    return SaveLinkCheckpoint(dir, entities_.get(), relations_.get(), state);
  }

  // Trains one epoch's batches; sets the mean loss and the cache counters.
  Status TrainEpoch(int epoch, const TrainCallbacks& callbacks, double* loss, int64_t* hits,
                    int64_t* misses) override {
    double sum = 0.0;
    *hits = *misses = 0;
    const int64_t n = batcher_.batches_per_epoch();
    for (int64_t b = 0; b < n; ++b) {
      FS_RETURN_IF_ERROR(FillWindow());
      LinkBatch batch;
      FS_RETURN_IF_ERROR(window_.Take(epoch, b, &batch));
      FS_ASSIGN_OR_RETURN(embed::RowBatch eb, entities_->Acquire());
      FS_ASSIGN_OR_RETURN(embed::RowBatch rb, relations_->Acquire());
      double l = 0.0;
      FS_RETURN_IF_ERROR(Step(batch, &eb, &rb, &l));
      *hits += eb.hits;
      *misses += eb.misses;
      FS_RETURN_IF_ERROR(entities_->Release(&eb, true));
      FS_RETURN_IF_ERROR(relations_->Release(&rb, scorer_.uses_relation()));
      sum += l;
      if (callbacks.on_batch) callbacks.on_batch(epoch + 1, b, n, l);
    }
    *loss = sum / static_cast<double>(n);
    return Status::OK();
  }

  // Ranks the validation (draw 0) or test (draw 1) triples.
  Status Evaluate(const Tensor& triples, RankMetrics* out, uint64_t draw) override {
    const SplitEvaluation& s = eval_[draw];
    return EvaluateRanking(ctx_, scorer_, TableReader(entities_.get(), o_.embedding_dim),
                           TableReader(relations_.get(), o_.embedding_dim), lt_.num_entities(), triples, s.filter,
                           s.candidates, out,
                           o_.reciprocal ? lt_.num_relations() : 0);
  }

  Status Export(const std::string& dir) override {
    return ExportLinkEmbeddings(o_, lt_, TableReader(entities_.get(), o_.embedding_dim),
                                TableReader(relations_.get(), o_.embedding_dim), relations_->rows(), /*write=*/true,
                                dir);
  }

 private:
  // Enqueues batches until the tables see W batches beyond the next one
  // (the lookahead window), or all of them.
  Status FillWindow() {
    return window_.Fill(
        batcher_, o_.EffectiveLookahead(),
        [this](LinkBatch* b) {
          FS_RETURN_IF_ERROR(entities_->Enqueue(b->entity_keys));
          return relations_->Enqueue(b->relation_keys);
        },
        [this] {
          entities_->Close();
          relations_->Close();
        });
  }

  Status Step(const LinkBatch& b, embed::RowBatch* eb, embed::RowBatch* rb, double* loss) {
    const int64_t d = o_.embedding_dim;
    const int64_t K = static_cast<int64_t>(b.entity_keys.size());
    const int64_t KR = static_cast<int64_t>(b.relation_keys.size());
    Tensor e = Tensor::Empty({K, d}, DType::kF32), r = Tensor::Empty({KR, d}, DType::kF32);
    GatherEmbeddings(ctx_, *eb, d, &e);
    GatherEmbeddings(ctx_, *rb, d, &r);
    Tensor de = Tensor::Zeros({K, d}, DType::kF32), dr = Tensor::Zeros({KR, d}, DType::kF32);
    FS_RETURN_IF_ERROR(LinkBatchLoss(ctx_, o_, scorer_, lt_.num_entities(), b, e, r, &de, &dr, loss));
    ++step_;
    config_.step = step_;
    FS_RETURN_IF_ERROR(UpdateRows(ctx_, *entities_, config_, de, eb));
    if (scorer_.uses_relation()) FS_RETURN_IF_ERROR(UpdateRows(ctx_, *relations_, config_, dr, rb));
    return Status::OK();
  }

  const TrainOptions& o_;
  ExecContext ctx_;
  const storage::LinkTriples& lt_;
  LinkScorer scorer_;
  LinkBatcher batcher_;
  KnownTriples known_;
  SplitEvaluation eval_[2];  // validation, test
  std::unique_ptr<TempDir> scratch_;
  std::unique_ptr<embed::EmbeddingTable> entities_, relations_;
  kernels::SparseOptimizerConfig config_;
  LookaheadWindow<LinkBatch> window_;
  int64_t step_ = 0;
};

}  // namespace

Status TrainLink(const TrainOptions& o, const TrainCallbacks& callbacks, TrainSummary* out) {
  ThreadPool pool(o.threads);
  const ExecContext ctx = CpuContext(o.seed, &pool);
  const int64_t baseline_rss = CurrentRssBytes();
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::LinkTriples> lt, storage::LinkTriples::Open(o.dataset));
  FS_ASSIGN_OR_RETURN(LinkScorer scorer, LinkScorer::Create(o.model, o.embedding_dim, o.margin));
  if (lt->layout().unseen_entities > 0) {
    FS_LOG(INFO) << lt->layout().unseen_entities
                 << " entities appear only in validation or test triples; they are ranked with their initial rows";
  }
  LinkTrainer trainer(o, ctx, *lt, scorer);
  FS_RETURN_IF_ERROR(trainer.Open(baseline_rss, out));
  if (o.plan_only) return Status::OK();

  return RunLinkEpochs(o, *lt, trainer, callbacks, out);
}

}  // namespace foresight::trainer::internal
