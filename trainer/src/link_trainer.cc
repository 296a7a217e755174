// TrainLink (link_trainer.h): the epoch loop of shallow link prediction.
// A step: acquire the batch's entity rows (positives and the chunks'
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
#include <deque>
#include <filesystem>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/core/logging.h"
#include "foresight/core/stopwatch.h"
#include "foresight/core/thread_pool.h"
#include "foresight/embed/embedding_table.h"
#include "foresight/kernels/ops.h"
#include "foresight/storage/dataset.h"
#include "foresight/storage/link_triples.h"
#include "foresight/storage/npy.h"
#include "checkpoint_lock.h"
#include "link_batches.h"
#include "link_checkpoint.h"
#include "metrics_writer.h"
#include "temp_dir.h"
#include "link_epochs.h"
#include "link_eval.h"
#include "link_loss.h"
#include "link_scorer.h"

namespace foresight::trainer::internal {
namespace {

constexpr uint64_t kRelationSeedStream = 0x52454C53ull;  // relation rows' initialiser seed

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

class LinkTrainer {
 public:
  LinkTrainer(const TrainOptions& o, const ExecContext& ctx, const storage::LinkTriples& lt, LinkScorer scorer)
      : o_(o), ctx_(ctx), lt_(lt), scorer_(scorer), batcher_(lt, o), known_(lt.num_relations()) {}

  Status Open() {
    known_.Add(lt_.train());
    known_.Add(lt_.val());
    known_.Add(lt_.test());
    FS_ASSIGN_OR_RETURN(const kernels::SparseOptimizer opt, kernels::ParseSparseOptimizer(o_.sparse_optimizer));
    embed::EmbeddingTableOptions eo;
    eo.rows = lt_.num_entities();
    eo.dim = o_.embedding_dim;
    eo.optimizer = opt;
    eo.init.seed = o_.seed;
    eo.init.scale = o_.init_scale;
    eo.store.create = true;
    eo.cache.lookahead = o_.lookahead;
    eo.cache.capacity_bytes = o_.cache_size > 0 ? o_.cache_size : 0;
    eo.cache.policy = o_.cache_policy == "lru" ? cache::Policy::kLru : cache::Policy::kLookahead;
    if (o_.table_store == "disk") {
      FS_ASSIGN_OR_RETURN(scratch_, TempDir::Create(o_.table_dir, "foresight-link-"));

      eo.store.kind = storage::RowStoreKind::kDisk;
      eo.store.path = scratch_->path() + "/entities.npy";
      eo.store.io_depth = o_.io_depth;
    }
    FS_ASSIGN_OR_RETURN(entities_, embed::EmbeddingTable::Open(eo));
    embed::EmbeddingTableOptions ro = eo;
    ro.rows = std::max<int64_t>(lt_.num_relations(), 1) * (o_.reciprocal ? 2 : 1);
    ro.init.seed = Mix64(o_.seed ^ kRelationSeedStream);
    ro.store = storage::RowStoreOptions();
    ro.store.create = true;
    ro.cache = cache::CacheConfig();
    FS_ASSIGN_OR_RETURN(relations_, embed::EmbeddingTable::Open(ro));
    config_.kind = opt;
    config_.lr = o_.sparse_lr;
    config_.weight_decay = o_.weight_decay;
    total_batches_ = static_cast<int64_t>(o_.epochs) * batcher_.batches_per_epoch();
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
  Status Restore(const std::string& dir, const LinkCheckpointState& state) {
    if (state.entity_rows != entities_->rows() || state.relation_rows != relations_->rows() ||
        state.row_width != entities_->layout().row_width()) {
      return FailedPrecondition("resume: the checkpoint in " + dir + " holds " + std::to_string(state.entity_rows) +
                                " entity and " + std::to_string(state.relation_rows) + " relation rows of width " +
                                std::to_string(state.row_width) + " but " + o_.dataset + " needs " +
                                std::to_string(entities_->rows()) + " and " + std::to_string(relations_->rows()) +
                                " of width " + std::to_string(entities_->layout().row_width()));
    }
    FS_RETURN_IF_ERROR(LoadLinkCheckpoint(dir, state, entities_.get(), relations_.get()));
    step_ = state.steps;
    next_batch_ = std::min<int64_t>(static_cast<int64_t>(state.epoch) * batcher_.batches_per_epoch(), total_batches_);
    return Status::OK();
  }

  Status Save(const std::string& dir, LinkCheckpointState* state) {
    state->steps = step_;
    return SaveLinkCheckpoint(dir, entities_.get(), relations_.get(), state);
  }

  // Trains one epoch's batches; sets the mean loss and the cache counters.
  Status TrainEpoch(int epoch, const TrainCallbacks& callbacks, double* loss, int64_t* hits, int64_t* misses) {
    double sum = 0.0;
    *hits = *misses = 0;
    const int64_t n = batcher_.batches_per_epoch();
    for (int64_t b = 0; b < n; ++b) {
      FS_RETURN_IF_ERROR(FillWindow());
      LinkBatch batch = std::move(window_.front());
      window_.pop_front();
      if (batch.epoch != epoch || batch.index != b) return Internal("link trainer: batch window out of order");
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

  Status Evaluate(const Tensor& triples, RankMetrics* out, uint64_t draw) {
    auto read = [](embed::EmbeddingTable* table, int64_t dim) {
      return [table, dim](const std::vector<int64_t>& keys, float* out) -> Status {
        const int64_t width = table->layout().row_width();
        std::vector<float> rows(keys.size() * static_cast<size_t>(width));
        FS_RETURN_IF_ERROR(table->ReadRows(keys, rows.data()));
        for (size_t i = 0; i < keys.size(); ++i) {
          std::memcpy(out + static_cast<int64_t>(i) * dim, rows.data() + static_cast<int64_t>(i) * width,
                      sizeof(float) * dim);
        }
        return Status::OK();
      };
    };
    std::vector<int64_t> candidates;
    if (o_.eval_negatives > 0 && o_.eval_negatives < lt_.num_entities()) {
      // A seeded sample of distinct entities, the same for every query.
      const RngKey key = RngKey::FromSeed(o_.seed).Fold(0x4556414Cull).Fold(draw);
      std::vector<char> taken(static_cast<size_t>(lt_.num_entities()), 0);
      for (int64_t k = 0; static_cast<int64_t>(candidates.size()) < o_.eval_negatives; ++k) {
        const int64_t e = static_cast<int64_t>(key.Below(static_cast<uint64_t>(lt_.num_entities()), 0, k));
        if (!taken[static_cast<size_t>(e)]) {
          taken[static_cast<size_t>(e)] = 1;
          candidates.push_back(e);
        }
      }
      std::sort(candidates.begin(), candidates.end());
    }
    return EvaluateRanking(ctx_, scorer_, read(entities_.get(), o_.embedding_dim), read(relations_.get(), o_.embedding_dim),
                           lt_.num_entities(), triples, known_, candidates, out,
                           o_.reciprocal ? lt_.num_relations() : 0);
  }

  Status Export(const std::string& dir) {
    std::filesystem::create_directories(dir);
    const int64_t d = o_.embedding_dim;
    const std::pair<embed::EmbeddingTable*, std::string> tables[] = {
        {entities_.get(), "entity_embeddings.npy"}, {relations_.get(), "relation_embeddings.npy"}};
    for (const auto& [table, file] : tables) {
      const int64_t rows = table == entities_.get() ? lt_.num_entities() : relations_->rows();
      FS_ASSIGN_OR_RETURN(auto w, storage::NpyWriter::Create(dir + "/" + file, DType::kF32, {d}));
      const int64_t width = table->layout().row_width();
      constexpr int64_t kBlock = 65536;
      std::vector<float> raw, emb;
      for (int64_t b = 0; b < rows; b += kBlock) {
        const int64_t n = std::min(kBlock, rows - b);
        std::vector<int64_t> keys(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) keys[static_cast<size_t>(i)] = b + i;
        raw.resize(static_cast<size_t>(n * width));
        emb.resize(static_cast<size_t>(n * d));
        FS_RETURN_IF_ERROR(table->ReadRows(keys, raw.data()));
        for (int64_t i = 0; i < n; ++i) std::memcpy(emb.data() + i * d, raw.data() + i * width, sizeof(float) * d);
        FS_RETURN_IF_ERROR(w->Append(emb.data(), n));
      }
      FS_RETURN_IF_ERROR(w->Finish());
    }
    // Names: the dataset's original entity ids and relation names.
    FS_ASSIGN_OR_RETURN(auto ds, storage::Dataset::Open(o_.dataset, /*validate_ids=*/false));
    if (ds->original_ids().defined()) {
      const Tensor& ids = ds->original_ids();
      if (ids.dtype() == DType::kU8) {
        FS_RETURN_IF_ERROR(storage::SaveNpyBytes(dir + "/entity_ids.npy", ids));
      } else {
        FS_RETURN_IF_ERROR(storage::SaveNpy(dir + "/entity_ids.npy", ids));
      }
    } else {
      Tensor ids = Tensor::Empty({lt_.num_entities()}, DType::kI64);
      for (int64_t i = 0; i < lt_.num_entities(); ++i) ids.data<int64_t>()[i] = i;
      FS_RETURN_IF_ERROR(storage::SaveNpy(dir + "/entity_ids.npy", ids));
    }
    if (lt_.relation_names().defined()) {
      FS_RETURN_IF_ERROR(storage::SaveNpyBytes(dir + "/relation_names.npy", lt_.relation_names()));
    }
    return Status::OK();
  }

 private:
  // Enqueues batches until the tables see W batches beyond the next one
  // (the lookahead window), or all of them.
  Status FillWindow() {
    const int64_t want = static_cast<int64_t>(o_.lookahead) + 1;
    while (static_cast<int64_t>(window_.size()) < want && next_batch_ < total_batches_) {
      const int epoch = static_cast<int>(next_batch_ / batcher_.batches_per_epoch());
      LinkBatch b = batcher_.Make(epoch, next_batch_ % batcher_.batches_per_epoch());
      FS_RETURN_IF_ERROR(entities_->Enqueue(b.entity_keys));
      FS_RETURN_IF_ERROR(relations_->Enqueue(b.relation_keys));
      window_.push_back(std::move(b));
      ++next_batch_;
    }
    if (next_batch_ == total_batches_ && !closed_) {
      entities_->Close();
      relations_->Close();
      closed_ = true;
    }
    return Status::OK();
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
  std::unique_ptr<TempDir> scratch_;
  std::unique_ptr<embed::EmbeddingTable> entities_, relations_;
  kernels::SparseOptimizerConfig config_;
  std::deque<LinkBatch> window_;
  int64_t next_batch_ = 0, total_batches_ = 0, step_ = 0;
  bool closed_ = false;
};

LinkRankValues RankValues(const RankMetrics& m) { return {m.mrr, m.hits1, m.hits3, m.hits10}; }

// The final line (no timings, so a resumed run writes the same text).
std::string LinkFinalLine(const LinkCheckpointState& p, int epochs) {
  return nlohmann::json({{"final", true},
                         {"best_epoch", p.best_epoch},
                         {"val_mrr", p.best_val_mrr < 0 ? 0.0 : p.best_val_mrr},
                         {"test_mrr", p.best_test.mrr},
                         {"test_hits1", p.best_test.hits1},
                         {"test_hits3", p.best_test.hits3},
                         {"test_hits10", p.best_test.hits10},
                         {"epochs", epochs},
                         {"stopped_early", p.stopped_early}})
      .dump();
}

}  // namespace

Status TrainLink(const TrainOptions& o, const TrainCallbacks& callbacks, TrainSummary* out) {
  ThreadPool pool(o.threads);
  const ExecContext ctx = CpuContext(o.seed, &pool);
  // The checkpoint directory is this run's until it returns; what killed
  // runs left half written in it goes first.
  std::unique_ptr<CheckpointDirLock> lock;
  if (!o.checkpoint_dir.empty()) {
    FS_ASSIGN_OR_RETURN(lock, CheckpointDirLock::Acquire(o.checkpoint_dir));
    FS_RETURN_IF_ERROR(RemoveLinkCheckpointLeftovers(o.checkpoint_dir));
  }
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::LinkTriples> lt, storage::LinkTriples::Open(o.dataset));
  FS_ASSIGN_OR_RETURN(LinkScorer scorer, LinkScorer::Create(o.model, o.embedding_dim, o.margin));
  if (lt->layout().unseen_entities > 0) {
    FS_LOG(INFO) << lt->layout().unseen_entities
                 << " entities appear only in validation or test triples; they are ranked with their initial rows";
  }
  LinkTrainer trainer(o, ctx, *lt, scorer);
  FS_RETURN_IF_ERROR(trainer.Open());

  // Progress of the run: what a checkpoint keeps besides the rows.
  LinkCheckpointState p;
  p.options = LinkOptionsToJson(o);
  p.options_hash = LinkOptionsHash(o);
  bool resumed = false;
  if (o.resume) {
    StatusOr<LinkCheckpointState> saved = ReadLinkCheckpointState(o.checkpoint_dir);
    if (!saved.ok() && saved.status().code() == StatusCode::kNotFound) {
      FS_LOG(INFO) << "resume: no complete checkpoint in " << o.checkpoint_dir << " yet; starting from epoch 1";
    } else {
      FS_RETURN_IF_ERROR(saved.status());
      if (saved->options_hash != p.options_hash) {
        return FailedPrecondition("resume: the checkpoint in " + o.checkpoint_dir +
                                  " was written with different training options (" + saved->options.dump() +
                                  ") than this run's (" + p.options.dump() +
                                  "); only epochs, threads, paths and the table store and cache options may change");
      }
      FS_RETURN_IF_ERROR(trainer.Restore(o.checkpoint_dir, *saved));
      const nlohmann::json options = p.options;
      p = std::move(saved).value();
      p.options = options;  // the new epochs are what later saves record
      resumed = true;
      if (o.progress && p.epoch < o.epochs && !p.stopped_early) {
        std::fprintf(stderr, "resuming from epoch %d of %d: %d done in %s\n", p.epoch + 1, o.epochs, p.epoch,
                     o.checkpoint_dir.c_str());
      }
    }
  }
  // With checkpoints, each metrics line is made durable before its epoch's
  // checkpoint commits (see MetricsWriter).
  std::unique_ptr<MetricsWriter> metrics;
  if (!o.metrics_file.empty()) {
    const bool durable = !o.checkpoint_dir.empty();
    if (resumed) {
      FS_ASSIGN_OR_RETURN(metrics, MetricsWriter::Resume(o.metrics_file, p.epoch, durable));
    } else {
      FS_ASSIGN_OR_RETURN(metrics, MetricsWriter::Create(o.metrics_file, durable));
    }
  }

  *out = TrainSummary();
  for (int epoch = p.epoch; epoch < o.epochs && !p.stopped_early; ++epoch) {
    Stopwatch watch;
    double loss = 0.0;
    int64_t hits = 0, misses = 0;
    FS_RETURN_IF_ERROR(trainer.TrainEpoch(epoch, callbacks, &loss, &hits, &misses));
    const double train_seconds = watch.Lap();
    nlohmann::json line = {{"epoch", epoch + 1},
                           {"loss", loss},
                           {"epoch_seconds", train_seconds},
                           {"triples_per_second", static_cast<double>(lt->train().size(0)) / train_seconds},
                           {"cache_hits", hits},
                           {"cache_misses", misses}};
    EpochMetrics em;
    em.epoch = epoch + 1;
    em.loss = loss;
    em.epoch_seconds = train_seconds;
    const bool evaluate = (epoch + 1) % o.eval_epochs == 0 || epoch + 1 == o.epochs;
    if (evaluate) {
      RankMetrics val, test;
      FS_RETURN_IF_ERROR(trainer.Evaluate(lt->val(), &val, 0));
      FS_RETURN_IF_ERROR(trainer.Evaluate(lt->test(), &test, 1));
      const double eval_seconds = watch.Lap();
      line.update(RankMetricsJson("val_", val));
      line.update(RankMetricsJson("test_", test));
      line["eval_seconds"] = eval_seconds;
      em.eval_seconds = eval_seconds;
      if (val.mrr > p.best_val_mrr) {  // ties keep the first epoch
        p.best_val_mrr = val.mrr;
        p.best_test = RankValues(test);
        p.best_epoch = epoch + 1;
        p.since_best = 0;
      } else {
        ++p.since_best;
      }
      if (o.progress) {
        std::fprintf(stderr, "epoch %d/%d  loss %.4f  val_mrr %.4f  test_mrr %.4f  test_hits10 %.4f  (%.1f s + eval %.1f s)\n",
                     epoch + 1, o.epochs, loss, val.mrr, test.mrr, test.hits10, train_seconds, eval_seconds);
      }
    } else if (o.progress) {
      std::fprintf(stderr, "epoch %d/%d  loss %.4f  (%.1f s)\n", epoch + 1, o.epochs, loss, train_seconds);
    }
    p.epoch = epoch + 1;
    p.stopped_early = o.patience > 0 && evaluate && p.since_best >= o.patience;
    // The line first, then the checkpoint (the order MetricsWriter relies on).
    if (metrics) FS_RETURN_IF_ERROR(metrics->WriteLine(line, /*ends_epoch=*/true));
    if (!o.checkpoint_dir.empty()) FS_RETURN_IF_ERROR(trainer.Save(o.checkpoint_dir, &p));
    out->history.push_back(em);
    if (callbacks.on_epoch) callbacks.on_epoch(em);
  }
  if (resumed && out->history.empty()) {
    FS_LOG(INFO) << "resume: the run in " << o.checkpoint_dir << " has finished (" << p.epoch
                 << " epochs); nothing to train";
  }
  out->epochs_completed = p.epoch;
  out->stopped_early = p.stopped_early;
  out->best_epoch = p.best_epoch;
  out->best_val_mrr = p.best_val_mrr < 0 ? 0.0 : p.best_val_mrr;
  out->test_mrr = p.best_test.mrr;
  out->test_hits10 = p.best_test.hits10;
  if (metrics) FS_RETURN_IF_ERROR(metrics->WriteFinalText(LinkFinalLine(p, p.epoch)));
  if (!o.export_dir.empty()) FS_RETURN_IF_ERROR(trainer.Export(o.export_dir));
  return Status::OK();
}

}  // namespace foresight::trainer::internal
