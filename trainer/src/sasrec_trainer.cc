// TrainSasrec (sasrec_trainer.h): the epoch loop. A step: acquire the
// batch's item rows (inputs, next items, negatives; planned W batches ahead
// by the table's lookahead cache), copy the embeddings out, run the model
// on the packed sequences and the loss on a tape, step the dense optimizer,
// then update every touched item row once with the fused sparse optimizer
// (gradients of repeated rows summed in a fixed order) and release the rows.
#include "sasrec_trainer.h"

#include <cstdio>
#include <cstring>
#include <memory>

#include <nlohmann/json.hpp>

#include "foresight/autograd/optimizer.h"
#include "foresight/core/stopwatch.h"
#include "foresight/core/thread_pool.h"
#include "foresight/embed/embedding_table.h"
#include "lookahead_window.h"
#include "metrics_writer.h"
#include "sasrec_batches.h"
#include "sasrec_eval.h"
#include "sasrec_model.h"
#include "temp_dir.h"

namespace foresight::trainer::internal {

namespace {

constexpr uint64_t kStepStream = 0x53415354;  // "SAST": dropout keys of the steps

nlohmann::json MetricsJson(const std::string& p, const SasrecMetrics& m) {
  return {{p + "hr10", m.hr10}, {p + "ndcg10", m.ndcg10}, {p + "hr10_full", m.hr10_full},
          {p + "ndcg10_full", m.ndcg10_full}};
}

class SasrecTrainer {
 public:
  SasrecTrainer(const TrainOptions& o, const ExecContext& ctx, const SasrecData& data)
      : o_(o), ctx_(ctx), data_(data), batcher_(data, o.batch_size, o.seed) {}

  Status Open() {
    SasrecConfig c;
    c.hidden = o_.hidden;
    c.heads = o_.heads;
    c.blocks = o_.blocks;
    c.max_length = o_.max_length;
    c.dropout = o_.dropout;
    c.seed = o_.seed;
    model_ = std::make_unique<SasrecModel>(c);
    autograd::OptimizerOptions oo;
    oo.kind = o_.optimizer;
    oo.lr = o_.lr;
    oo.weight_decay = o_.weight_decay;
    oo.beta2 = o_.adam_beta2;
    FS_ASSIGN_OR_RETURN(optimizer_, autograd::Optimizer::Create(oo, model_->Parameters()));

    embed::EmbeddingTableOptions eo;
    eo.rows = data_.num_items() + 1;  // row 0: no item, never read
    eo.dim = o_.hidden;
    eo.optimizer = o_.optimizer == "sgd" ? kernels::SparseOptimizer::kSgd : kernels::SparseOptimizer::kAdam;
    eo.init.seed = o_.seed;
    // Glorot-uniform scale, as the dense layers (the authors' Xavier init).
    eo.init.scale = std::sqrt(6.0f / static_cast<float>(eo.rows + o_.hidden));
    FS_ASSIGN_OR_RETURN(eo.store.kind, storage::ParseRowStoreKind(o_.table_store));
    eo.store.writable = true;
    eo.store.create = true;
    eo.store.io_depth = o_.io_depth;
    if (eo.store.kind != storage::RowStoreKind::kMemory) {
      FS_ASSIGN_OR_RETURN(dir_, TempDir::Create(o_.table_dir, "foresight-tables-"));
      eo.store.path = dir_->path() + (eo.store.kind == storage::RowStoreKind::kRocksDb ? "/items" : "/items.npy");
    }
    FS_ASSIGN_OR_RETURN(eo.cache.policy, cache::ParsePolicy(o_.cache_policy));
    eo.cache.lookahead = o_.EffectiveLookahead();
    eo.cache.capacity_bytes = o_.cache_size > 0 ? o_.cache_size : 0;
    FS_ASSIGN_OR_RETURN(items_, embed::EmbeddingTable::Open(eo));
    sparse_.kind = eo.optimizer;
    sparse_.lr = o_.lr;
    sparse_.beta2 = o_.adam_beta2;
    sparse_.weight_decay = o_.weight_decay;
    window_.set_total(static_cast<int64_t>(o_.epochs) * batcher_.batches_per_epoch());
    return Status::OK();
  }

  int64_t batches_per_epoch() const { return batcher_.batches_per_epoch(); }

  Status TrainEpoch(int epoch, const TrainCallbacks& callbacks, double* loss, int64_t* tokens, int64_t* hits,
                    int64_t* misses) {
    double sum = 0.0;
    *tokens = *hits = *misses = 0;
    const int64_t n = batcher_.batches_per_epoch();
    for (int64_t b = 0; b < n; ++b) {
      FS_RETURN_IF_ERROR(FillWindow());
      SasrecBatch batch;
      FS_RETURN_IF_ERROR(window_.Take(epoch, b, &batch));
      FS_ASSIGN_OR_RETURN(embed::RowBatch rows, items_->Acquire());
      double l = 0.0;
      FS_RETURN_IF_ERROR(Step(batch, &rows, &l));
      *hits += rows.hits;
      *misses += rows.misses;
      *tokens += batch.tokens();
      FS_RETURN_IF_ERROR(items_->Release(&rows, true));
      sum += l;
      if (callbacks.on_batch) callbacks.on_batch(epoch + 1, b, n, l);
    }
    *loss = sum / static_cast<double>(n);
    return Status::OK();
  }

  Status Evaluate(SasrecSplit split, SasrecMetrics* out) {
    // The whole item matrix, read once (the table flushes first).
    const int64_t rows = data_.num_items() + 1, d = o_.hidden, width = items_->layout().row_width();
    std::vector<int64_t> keys(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) keys[static_cast<size_t>(i)] = i;
    std::vector<float> raw(static_cast<size_t>(rows * width));
    FS_RETURN_IF_ERROR(items_->ReadRows(keys, raw.data()));
    Tensor items = Tensor::Empty({rows, d}, DType::kF32);
    for (int64_t i = 0; i < rows; ++i) {
      std::memcpy(items.data<float>() + i * d, raw.data() + i * width, sizeof(float) * d);
    }
    return EvaluateSasrec(ctx_, *model_, data_, items, split, o_.seed, o_.eval_batch_size, out);
  }

 private:
  // Enqueues batches until the table sees W batches beyond the next one.
  Status FillWindow() {
    return window_.Fill(
        batcher_, o_.EffectiveLookahead(), [this](SasrecBatch* b) { return items_->Enqueue(b->keys); },
        [this] { items_->Close(); });
  }

  Status Step(const SasrecBatch& b, embed::RowBatch* rows, double* loss) {
    const int64_t t = b.tokens(), d = o_.hidden, width = rows->rows.size(1);
    Tensor e = Tensor::Empty({3 * t, d}, DType::kF32);
    {
      const float* src = rows->rows.data<float>();
      const int64_t* local = rows->local_ids.data<int64_t>();
      float* dst = e.data<float>();
      ctx_.pool->ParallelFor(3 * t, 256, [&](int64_t s, int64_t end) {
        for (int64_t i = s; i < end; ++i) std::memcpy(dst + i * d, src + local[i] * width, sizeof(float) * d);
      });
    }
    autograd::Var in(e.Slice(0, 0, t), true), pos(e.Slice(0, t, 2 * t), true), neg(e.Slice(0, 2 * t, 3 * t), true);
    Tensor positions = Tensor::Empty({t}, DType::kI64);
    std::memcpy(positions.data<int64_t>(), b.positions.data(), sizeof(int64_t) * static_cast<size_t>(t));
    FS_ASSIGN_OR_RETURN(autograd::PackedSequences packed, autograd::PackedSequences::FromLengths(b.lengths));
    ++step_;
    autograd::Tape tape(ctx_.WithRng(RngKey::FromSeed(o_.seed).Fold(kStepStream).Fold(static_cast<uint64_t>(step_))),
                        /*training=*/true);
    FS_ASSIGN_OR_RETURN(autograd::Var h, model_->Forward(tape, in, positions, packed));
    FS_ASSIGN_OR_RETURN(autograd::Var l, NextItemBceLoss(tape, h, pos, neg));
    optimizer_->ZeroGrad();
    FS_RETURN_IF_ERROR(tape.Backward(l));
    FS_RETURN_IF_ERROR(optimizer_->Step(ctx_));
    // The rows' gradients in key order (inputs, positives, negatives).
    Tensor grad = Tensor::Zeros({3 * t, d}, DType::kF32);
    const autograd::Var* parts[] = {&in, &pos, &neg};
    for (int k = 0; k < 3; ++k) {
      if (!parts[k]->grad().defined()) continue;
      std::memcpy(grad.data<float>() + k * t * d, parts[k]->grad().data<float>(), sizeof(float) * t * d);
    }
    Tensor offsets = Tensor::Empty({3 * t + 1}, DType::kI64);
    for (int64_t i = 0; i <= 3 * t; ++i) offsets.data<int64_t>()[i] = i;
    sparse_.step = step_;
    FS_RETURN_IF_ERROR(kernels::EmbeddingBagBackwardUpdate(ctx_, items_->layout(), sparse_, Tensor(), rows->local_ids,
                                                           offsets, Tensor(), kernels::Pooling::kSum, grad,
                                                           &rows->rows));
    *loss = l.value().data<float>()[0];
    return Status::OK();
  }

  const TrainOptions& o_;
  ExecContext ctx_;
  const SasrecData& data_;
  SasrecBatcher batcher_;
  std::unique_ptr<SasrecModel> model_;
  std::unique_ptr<autograd::Optimizer> optimizer_;
  std::unique_ptr<TempDir> dir_;  // before items_: outlives the table's files
  std::unique_ptr<embed::EmbeddingTable> items_;
  kernels::SparseOptimizerConfig sparse_;
  LookaheadWindow<SasrecBatch> window_;
  int64_t step_ = 0;
};

}  // namespace

Status TrainSasrec(const TrainOptions& o, const TrainCallbacks& callbacks, TrainSummary* out) {
  ThreadPool pool(o.threads);
  const ExecContext ctx = CpuContext(o.seed, &pool);
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::SequencesDataset> ds, storage::SequencesDataset::Open(o.dataset));
  const SasrecData data(std::move(ds), o.max_length);
  if (data.train_users().empty()) {
    return InvalidArgument("dataset " + o.dataset + ": no user has two training actions; nothing to train on");
  }
  SasrecTrainer trainer(o, ctx, data);
  FS_RETURN_IF_ERROR(trainer.Open());
  std::unique_ptr<MetricsWriter> metrics;
  if (!o.metrics_file.empty()) {
    FS_ASSIGN_OR_RETURN(metrics, MetricsWriter::Create(o.metrics_file, /*durable=*/false));
  }

  *out = TrainSummary();
  double best_val = -1.0;
  SasrecMetrics best_test;
  int since_best = 0;
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    Stopwatch watch;
    const double cpu_start = ProcessCpuSeconds();
    double loss = 0.0;
    int64_t tokens = 0, hits = 0, misses = 0;
    FS_RETURN_IF_ERROR(trainer.TrainEpoch(epoch, callbacks, &loss, &tokens, &hits, &misses));
    const double train_seconds = watch.Lap();
    nlohmann::json line = {{"epoch", epoch + 1},
                           {"loss", loss},
                           {"epoch_seconds", train_seconds},
                           {"epoch_cpu_seconds", ProcessCpuSeconds() - cpu_start},
                           {"tokens_per_second", tokens / train_seconds},
                           {"cache_hits", hits},
                           {"cache_misses", misses}};
    EpochMetrics em;
    em.epoch = epoch + 1;
    em.loss = loss;
    em.epoch_seconds = train_seconds;
    const bool evaluate = (epoch + 1) % o.eval_epochs == 0 || epoch + 1 == o.epochs;
    if (evaluate) {
      SasrecMetrics val, test;
      FS_RETURN_IF_ERROR(trainer.Evaluate(SasrecSplit::kValid, &val));
      FS_RETURN_IF_ERROR(trainer.Evaluate(SasrecSplit::kTest, &test));
      const double eval_seconds = watch.Lap();
      line.update(MetricsJson("val_", val));
      line.update(MetricsJson("test_", test));
      line["eval_seconds"] = eval_seconds;
      em.eval_seconds = eval_seconds;
      if (val.ndcg10 > best_val) {  // ties keep the first epoch
        best_val = val.ndcg10;
        best_test = test;
        out->best_epoch = epoch + 1;
        since_best = 0;
      } else {
        ++since_best;
      }
      if (o.progress) {
        std::fprintf(stderr,
                     "epoch %d/%d  loss %.4f  val_ndcg10 %.4f  test_hr10 %.4f  test_ndcg10 %.4f  "
                     "test_hr10_full %.4f  (%.1f s + eval %.1f s)\n",
                     epoch + 1, o.epochs, loss, val.ndcg10, test.hr10, test.ndcg10, test.hr10_full, train_seconds,
                     eval_seconds);
      }
    } else if (o.progress) {
      std::fprintf(stderr, "epoch %d/%d  loss %.4f  (%.1f s)\n", epoch + 1, o.epochs, loss, train_seconds);
    }
    if (metrics) FS_RETURN_IF_ERROR(metrics->WriteLine(line, /*ends_epoch=*/true));
    out->history.push_back(em);
    out->epochs_completed = epoch + 1;
    if (callbacks.on_epoch) callbacks.on_epoch(em);
    if (o.patience > 0 && evaluate && since_best >= o.patience) {
      out->stopped_early = true;
      break;
    }
  }
  out->best_val_ndcg10 = best_val < 0 ? 0.0 : best_val;
  out->test_hr10 = best_test.hr10;
  out->test_ndcg10 = best_test.ndcg10;
  if (metrics) {
    nlohmann::json final_line = {{"final", true},
                                 {"best_epoch", out->best_epoch},
                                 {"val_ndcg10", out->best_val_ndcg10},
                                 {"epochs", out->epochs_completed},
                                 {"stopped_early", out->stopped_early}};
    final_line.update(MetricsJson("test_", best_test));
    FS_RETURN_IF_ERROR(metrics->WriteFinalText(final_line.dump()));
  }
  return Status::OK();
}

}  // namespace foresight::trainer::internal
