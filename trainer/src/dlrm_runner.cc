#include "dlrm_runner.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint_lock.h"
#include "click_batch.h"
#include "click_metrics.h"
#include "data_parallel.h"
#include "dlrm_checkpoint.h"
#include "dlrm_model.h"
#include "dlrm_schedule.h"
#include "dlrm_tables.h"
#include "epoch_runner.h"
#include "foresight/autograd/functional.h"
#include "foresight/autograd/optimizer.h"
#include "foresight/core/logging.h"
#include "foresight/core/process_memory.h"
#include "foresight/core/progress.h"
#include "foresight/core/stopwatch.h"
#include "foresight/core/test_kill_point.h"
#include "foresight/core/thread_pool.h"
#include "foresight/embed/embedding_bag_collection.h"
#include "foresight/embed/sharded_embedding_bags.h"
#include "metrics_writer.h"

namespace foresight::trainer::internal {

namespace {

std::string Fixed(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

// The median of v (the mean of the middle two when even; 0 when empty).
double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  return 0.5 * (upper + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)));
}

// Counters at one moment, to report the difference between two.
struct CacheSnapshot {
  int64_t hits = 0, misses = 0, bypassed = 0, writebacks = 0, bytes_read = 0, bytes_written = 0;
};

struct Inflight {
  ScheduledItem item;
  ClickBatch batch;  // kTrain, kEval: this rank's part of item.rows
};

CacheSnapshot Minus(const CacheSnapshot& a, const CacheSnapshot& b) {
  return {a.hits - b.hits, a.misses - b.misses, a.bypassed - b.bypassed, a.writebacks - b.writebacks,
          a.bytes_read - b.bytes_read, a.bytes_written - b.bytes_written};
}

class DlrmTrainer {
 public:
  DlrmTrainer(const TrainOptions& o, const TrainCallbacks& callbacks, Communicator* comm)
      : o_(o),
        callbacks_(callbacks),
        comm_(comm),
        ranks_(comm->size()),
        writer_(comm->rank() == 0),
        pool_(o.threads),
        ctx_(CpuContext(o.seed, &pool_)) {
    dp_.comm = comm;
    dp_.bucket_bytes = o.allreduce_bucket;
    dp_.log = writer_ && o.progress;
  }

  Status Run(TrainSummary* out);

 private:
  Status OpenData();
  Status Fill();
  Status TrainBatch(const Inflight& b);
  Status EvalBatch(const Inflight& b);
  // Several ranks: the step of the global batch from this rank's part
  // (sharded tables, dense gradients all-reduced), and an evaluation
  // batch's logits gathered on every rank in batch order.
  Status TrainShardedBatch(const Inflight& b);
  Status EvalShardedBatch(const Inflight& b);
  // The counters since the last report, summed over the ranks.
  StatusOr<CacheSnapshot> ReportedCounters(const CacheSnapshot& now);
  Status Report(const ScheduledItem& item);
  // Counts a finished training step of `b` with the global batch's `loss`.
  // seconds: the step's wall time; cpu_seconds: the process's CPU time
  // (all threads) over it.
  void FinishStep(const Inflight& b, double loss, double seconds, double cpu_seconds);
  // Restores the run from options.checkpoint_dir when it holds one of the
  // same configuration; *resumed says whether it did.
  Status Resume(bool* resumed);
  CacheSnapshot Snapshot() const;
  std::string CacheStatus() const;

  const TrainOptions& o_;
  const TrainCallbacks& callbacks_;
  Communicator* comm_;
  const int ranks_;
  const bool writer_;  // rank 0: metrics, checkpoint pointer, progress
  ThreadPool pool_;
  ExecContext ctx_;
  std::unique_ptr<storage::ClicksDataset> data_;
  std::unique_ptr<sampler::SeedOrder> order_;
  std::unique_ptr<DlrmSchedule> schedule_;
  DlrmTables opened_;  // the tables and their directory
  embed::EmbeddingBagCollection* tables_ = nullptr;  // this rank's rows
  embed::ShardedEmbeddingBags* sharded_ = nullptr;   // several ranks
  double exchange_seconds_at_report_ = 0;
  Stopwatch loop_watch_;  // since the last report
  int64_t exchange_bytes_at_report_ = 0;
  int64_t cache_bytes_ = 0;
  int64_t baseline_rss_ = 0;  // before the dataset is opened
  std::unique_ptr<DlrmModel> model_;
  std::unique_ptr<autograd::Optimizer> optimizer_;
  // Several ranks: the dense gradients' exchange. After model_, so its
  // gradient buckets go (and unhook the parameters) before the parameters.
  DataParallel dp_;
  kernels::SparseOptimizerConfig sparse_;
  std::unique_ptr<MetricsWriter> metrics_;
  std::unique_ptr<Progress> progress_;
  bool own_display_ = false;

  std::deque<Inflight> window_;
  int64_t batches_ahead_ = 0;  // kTrain / kEval items in window_
  bool schedule_done_ = false;

  // Since the last report.
  double loss_sum_ = 0;
  int64_t loss_steps_ = 0, samples_ = 0;
  double train_seconds_ = 0, eval_seconds_ = 0;
  double train_cpu_seconds_ = 0;  // the process's CPU time over the training steps
  // Each training step's wall seconds since the last metrics line (for the
  // median step: an epoch's first step also pays the first allocations).
  std::vector<double> step_seconds_;
  CacheSnapshot last_;
  std::vector<float> logits_[2], labels_[2];
  // The best validation AUC so far (ties keep the first).
  int best_epoch_ = 0;
  int64_t best_step_ = 0;
  double best_val_auc_ = -1, best_test_auc_ = 0, best_test_logloss_ = 0;
  int epochs_done_ = 0;
  DlrmCheckpointState checkpoint_;
};

Status DlrmTrainer::OpenData() {
  StatusOr<storage::DatasetManifest> manifest =
      storage::ReadManifest(o_.dataset + "/" + storage::kManifestFile);
  if (manifest.ok() && manifest->kind != storage::kKindClicks) {
    return InvalidArgument("model dlrm trains on a click log, but " + o_.dataset + " is a dataset of kind '" +
                           manifest->kind + "'; make one with `foresight preprocess --format criteo|csv` or "
                           "`foresight generate clicks`");
  }
  FS_ASSIGN_OR_RETURN(data_, storage::ClicksDataset::Open(o_.dataset));
  const storage::ClicksLayout& layout = data_->layout();
  if (layout.train.size() == 0) {
    return InvalidArgument(o_.dataset + ": the training split is empty (manifest clicks.train)");
  }
  if (data_->num_fields() == 0) {
    return InvalidArgument(o_.dataset + ": no categorical fields; DLRM needs at least one embedding table");
  }
  order_ = std::make_unique<sampler::SeedOrder>(RowRangeIds(layout.train.begin, layout.train.end), o_.batch_size,
                                                o_.seed);
  return order_->status();
}

// Keeps the current batch and the W + 1 after it enqueued on the tables
// (the one after the current is planned and read while the current computes).
Status DlrmTrainer::Fill() {
  const int64_t want = static_cast<int64_t>(o_.EffectiveLookahead()) + 2;
  while (!schedule_done_ && (batches_ahead_ < want || window_.empty())) {
    Inflight next;
    if (!schedule_->Next(&next.item)) {
      schedule_done_ = true;
      if (sharded_ != nullptr) {
        sharded_->Close();
      } else {
        tables_->Close();
      }
      break;
    }
    if (next.item.kind != ScheduledItem::Kind::kReport) {
      if (sharded_ != nullptr) {
        // This rank's part of the global batch (every rank's schedule is
        // the one-rank run's).
        const int64_t n = next.item.rows.size(0);
        const int64_t begin = embed::RankPartBegin(n, comm_->rank(), ranks_);
        const Tensor part = next.item.rows.Slice(0, begin, begin + embed::RankPartSize(n, comm_->rank(), ranks_));
        FS_ASSIGN_OR_RETURN(next.batch, MakeClickBatch(*data_, part, &pool_));
        FS_RETURN_IF_ERROR(sharded_->Enqueue(next.batch.ids, next.batch.offsets, n));
      } else {
        FS_ASSIGN_OR_RETURN(next.batch, MakeClickBatch(*data_, next.item.rows, &pool_));
        FS_RETURN_IF_ERROR(tables_->Enqueue(next.batch.ids, next.batch.offsets));
      }
      ++batches_ahead_;
    }
    window_.push_back(std::move(next));
  }
  return Status::OK();
}

Status DlrmTrainer::TrainBatch(const Inflight& b) {
  Stopwatch watch;
  const double cpu_start = ProcessCpuSeconds();
  autograd::Tape tape(ctx_.WithRng(StepKey(o_.seed, b.item.epoch, b.item.batch)), /*training=*/true);
  sparse_.step = b.item.step;  // adam's bias correction: the run's step, 1-based
  FS_ASSIGN_OR_RETURN(autograd::Var emb, tables_->Forward(&tape, Tensor(), sparse_));
  FS_ASSIGN_OR_RETURN(autograd::Var logits, model_->Forward(tape, autograd::Var(b.batch.dense), emb));
  FS_ASSIGN_OR_RETURN(autograd::Var loss, autograd::BceWithLogitsLoss(tape, logits, b.batch.targets));
  optimizer_->ZeroGrad();
  FS_RETURN_IF_ERROR(tape.Backward(loss));  // the tables' rows are updated here
  FS_RETURN_IF_ERROR(optimizer_->Step(ctx_));
  FinishStep(b, loss.value().data<float>()[0], watch.Lap(), ProcessCpuSeconds() - cpu_start);
  return Status::OK();
}

void DlrmTrainer::FinishStep(const Inflight& b, double loss, double seconds, double cpu_seconds) {
  const int64_t samples = b.item.rows.size(0);  // the global batch
  loss_sum_ += loss;
  ++loss_steps_;
  samples_ += samples;
  train_seconds_ += seconds;
  train_cpu_seconds_ += cpu_seconds;
  step_seconds_.push_back(seconds);
  if (callbacks_.on_batch) callbacks_.on_batch(b.item.epoch + 1, b.item.batch, schedule_->steps_per_epoch(), loss);
  if (progress_) {
    progress_->Advance(samples);
    progress_->SetStatus("loss " + Fixed("%.4f", loss_sum_ / static_cast<double>(loss_steps_)) + CacheStatus());
  }
}

Status DlrmTrainer::TrainShardedBatch(const Inflight& b) {
  TestKillPoint("train.step");  // the multi-rank kill test's mid-epoch point
  Stopwatch watch;
  const double cpu_start = ProcessCpuSeconds();
  const int64_t n = b.batch.rows.size(0), global = b.item.rows.size(0);
  Tensor pooled;
  FS_RETURN_IF_ERROR(sharded_->Forward(ctx_, &pooled));
  optimizer_->ZeroGrad();
  StepResult result;
  Tensor grad;
  if (n > 0) {
    autograd::Tape tape(ctx_.WithRng(StepKey(o_.seed, b.item.epoch, b.item.batch)), /*training=*/true);
    autograd::Var emb(pooled, /*requires_grad=*/true);
    const int64_t first_row = embed::RankPartBegin(global, comm_->rank(), ranks_);
    FS_ASSIGN_OR_RETURN(autograd::Var logits, model_->Forward(tape, autograd::Var(b.batch.dense), emb, first_row));
    FS_ASSIGN_OR_RETURN(autograd::Var loss, autograd::BceWithLogitsLoss(tape, logits, b.batch.targets));
    result.loss = loss.value().data<float>()[0];
    result.counted = n;
    // Bucketed: the dense gradients' sums start from backward's hooks.
    FS_RETURN_IF_ERROR(BeforeBackward(&dp_, model_->Parameters(), n, &result));
    FS_RETURN_IF_ERROR(tape.Backward(loss));
    grad = emb.grad();
  } else {
    FS_RETURN_IF_ERROR(BeforeBackward(&dp_, model_->Parameters(), n, &result));
  }
  // Every rank starts its buckets before the tables' all-to-all, whether
  // its part had samples or not, so the collectives line up.
  FS_RETURN_IF_ERROR(StartGradientSums(&dp_));
  // This part's gradient is of its mean loss; the global batch's mean
  // weighs it by n / global.
  if (!grad.defined()) grad = Tensor::Zeros({n, pooled.size(1)}, DType::kF32);
  const float scale = static_cast<float>(static_cast<double>(n) / static_cast<double>(global));
  float* g = grad.data<float>();
  const int64_t values = grad.numel();
  for (int64_t i = 0; i < values; ++i) g[i] *= scale;
  sparse_.step = b.item.step;
  FS_RETURN_IF_ERROR(sharded_->BackwardUpdate(ctx_, sparse_, grad));
  FS_RETURN_IF_ERROR(AllReduceStep(&dp_, model_->Parameters(), n, &result));
  FS_RETURN_IF_ERROR(optimizer_->Step(ctx_));
  FinishStep(b, result.loss, watch.Lap(), ProcessCpuSeconds() - cpu_start);
  return Status::OK();
}

Status DlrmTrainer::EvalShardedBatch(const Inflight& b) {
  Stopwatch watch;
  const int64_t n = b.batch.rows.size(0);
  Tensor pooled;
  FS_RETURN_IF_ERROR(sharded_->Forward(ctx_, &pooled));
  // (logit, label) of this rank's samples, sent to every rank: each then
  // holds the global batch's in batch order.
  Tensor pairs = Tensor::Empty({ranks_ * n, 2}, DType::kF32);
  if (n > 0) {
    autograd::Tape tape(ctx_, /*training=*/false, /*record=*/false);
    FS_ASSIGN_OR_RETURN(autograd::Var logits,
                        model_->Forward(tape, autograd::Var(b.batch.dense), autograd::Var(pooled)));
    float* p = pairs.data<float>();
    for (int64_t i = 0; i < n; ++i) {
      p[2 * i] = logits.value().data<float>()[i];
      p[2 * i + 1] = b.batch.targets.data<float>()[i];
    }
    for (int r = 1; r < ranks_; ++r) std::copy(p, p + 2 * n, p + 2 * n * r);
  }
  Tensor all;
  std::vector<int64_t> got;
  FS_RETURN_IF_ERROR(comm_->AllToAllV(pairs, std::vector<int64_t>(static_cast<size_t>(ranks_), n), &all, &got));
  const float* p = all.data<float>();
  for (int64_t i = 0; i < all.size(0); ++i) {
    logits_[b.item.split].push_back(p[2 * i]);
    labels_[b.item.split].push_back(p[2 * i + 1]);
  }
  eval_seconds_ += watch.Lap();
  return Status::OK();
}

StatusOr<CacheSnapshot> DlrmTrainer::ReportedCounters(const CacheSnapshot& now) {
  CacheSnapshot d = Minus(now, last_);
  if (ranks_ == 1) return d;
  int64_t v[6] = {d.hits, d.misses, d.bypassed, d.writebacks, d.bytes_read, d.bytes_written};
  FS_RETURN_IF_ERROR(comm_->AllReduceSum(v, 6));
  return CacheSnapshot{v[0], v[1], v[2], v[3], v[4], v[5]};
}

Status DlrmTrainer::EvalBatch(const Inflight& b) {
  Stopwatch watch;
  autograd::Tape tape(ctx_, /*training=*/false, /*record=*/false);
  FS_ASSIGN_OR_RETURN(autograd::Var emb, tables_->Forward(&tape, Tensor(), sparse_));
  FS_ASSIGN_OR_RETURN(autograd::Var logits, model_->Forward(tape, autograd::Var(b.batch.dense), emb));
  const int64_t n = b.batch.rows.size(0);
  const float* z = logits.value().data<float>();
  const float* y = b.batch.targets.data<float>();
  logits_[b.item.split].insert(logits_[b.item.split].end(), z, z + n);
  labels_[b.item.split].insert(labels_[b.item.split].end(), y, y + n);
  eval_seconds_ += watch.Lap();
  return Status::OK();
}

CacheSnapshot DlrmTrainer::Snapshot() const {
  CacheSnapshot s;
  const embed::EmbeddingTable* t = tables_->table();
  if (t->planner() != nullptr) {
    const cache::CacheCounters c = t->planner()->counters();
    s.hits = c.hits;
    s.misses = c.misses;
    s.bypassed = c.bypassed;
    s.writebacks = c.writebacks;
  }
  const storage::RowStoreStats st = t->store()->stats();
  s.bytes_read = st.bytes_read;
  s.bytes_written = st.bytes_written;
  return s;
}

// " | cache 83% hits" while the tables train behind a cache.
std::string DlrmTrainer::CacheStatus() const {
  if (cache_bytes_ == 0 || tables_->table()->planner() == nullptr) return "";
  const CacheSnapshot now = Snapshot();
  const double requested = static_cast<double>(now.hits - last_.hits + now.misses - last_.misses);
  if (requested <= 0) return "";
  return " | cache " + Fixed("%.0f%%", 100.0 * static_cast<double>(now.hits - last_.hits) / requested) + " hits";
}

Status DlrmTrainer::Report(const ScheduledItem& item) {
  FS_ASSIGN_OR_RETURN(ClickMetrics val, ComputeClickMetrics(logits_[0], labels_[0]));
  FS_ASSIGN_OR_RETURN(ClickMetrics test, ComputeClickMetrics(logits_[1], labels_[1]));
  const CacheSnapshot now = Snapshot();
  FS_ASSIGN_OR_RETURN(const CacheSnapshot d, ReportedCounters(now));
  nlohmann::json j;
  j["epoch"] = item.epoch + 1;
  j["step"] = item.step;
  if (!item.epoch_end) j["epoch_end"] = false;
  j["loss"] = loss_steps_ > 0 ? loss_sum_ / static_cast<double>(loss_steps_) : 0.0;
  j["val_auc"] = val.auc;
  j["val_logloss"] = val.logloss;
  j["val_acc"] = val.accuracy;
  j["test_auc"] = test.auc;
  j["test_logloss"] = test.logloss;
  j["test_acc"] = test.accuracy;
  j["samples"] = samples_;
  j["train_seconds"] = train_seconds_;
  j["train_cpu_seconds"] = train_cpu_seconds_;
  j["samples_per_second"] = train_seconds_ > 0 ? static_cast<double>(samples_) / train_seconds_ : 0.0;
  j["median_step_seconds"] = MedianOf(step_seconds_);
  j["eval_seconds"] = eval_seconds_;
  // Over all ranks' shards.
  j["cache_hits"] = d.hits;
  j["cache_misses"] = d.misses;
  j["rows_requested"] = d.hits + d.misses;
  // Rows read around the cache (a batch with more distinct rows than the
  // cache has free slots) and dirty rows written back on eviction.
  j["rows_bypassed"] = d.bypassed;
  j["rows_written_back"] = d.writebacks;
  j["bytes_read"] = d.bytes_read;
  j["bytes_written"] = d.bytes_written;
  j["loop_seconds"] = loop_watch_.Lap();  // wall time since the last line: batches, steps, evaluation
  if (sharded_ != nullptr) {
    // Rank 0's time in the exchanges (waiting for peers included) and the
    // bytes it sent: the sharded tables' all-to-alls and the dense
    // gradients' all-reduce.
    j["ranks"] = ranks_;
    j["exchange_seconds"] = sharded_->exchange_seconds() - exchange_seconds_at_report_;
    j["exchange_bytes"] = sharded_->exchange_bytes() - exchange_bytes_at_report_;
    j["allreduce_seconds"] = dp_.allreduce_seconds;
    j["allreduce_bytes"] = dp_.allreduce_bytes;
    exchange_seconds_at_report_ = sharded_->exchange_seconds();
    exchange_bytes_at_report_ = sharded_->exchange_bytes();
    dp_.allreduce_seconds = 0;
    dp_.allreduce_bytes = 0;
    dp_.steps = 0;
  }
  if (metrics_) FS_RETURN_IF_ERROR(metrics_->WriteLine(j, item.epoch_end));

  if (val.auc > best_val_auc_) {
    best_val_auc_ = val.auc;
    best_epoch_ = item.epoch + 1;
    best_step_ = item.step;
    best_test_auc_ = test.auc;
    best_test_logloss_ = test.logloss;
  }
  const std::string line = "loss " + Fixed("%.4f", j["loss"].get<double>()) + " | val auc " +
                           Fixed("%.4f", val.auc) + " logloss " + Fixed("%.4f", val.logloss) + " | test auc " +
                           Fixed("%.4f", test.auc) + " logloss " + Fixed("%.4f", test.logloss) + " | " +
                           FormatRate(j["samples_per_second"].get<double>(), "samples") + CacheStatus() +
                           " | eval " + Fixed("%.2fs", eval_seconds_);
  if (item.epoch_end) {
    epochs_done_ = item.epoch + 1;
    // The line first, then the checkpoint (the order MetricsWriter relies on).
    if (!o_.checkpoint_dir.empty()) {
      checkpoint_.epoch = epochs_done_;
      checkpoint_.best_epoch = best_epoch_;
      checkpoint_.best_step = best_step_;
      checkpoint_.best_val_auc = best_val_auc_;
      checkpoint_.test_auc = best_test_auc_;
      checkpoint_.test_logloss = best_test_logloss_;
      FS_RETURN_IF_ERROR(SaveDlrmCheckpoint(o_.checkpoint_dir, *model_, *optimizer_, tables_, comm_, &checkpoint_));
    }
    if (progress_) {
      progress_->FinishLine("epoch " + std::to_string(item.epoch + 1) + "/" + std::to_string(o_.epochs) +
                            " step " + std::to_string(item.step) + ": " + line);
      progress_.reset();
    }
  } else if (own_display_) {
    FS_LOG(INFO) << "epoch " << item.epoch + 1 << " step " << item.step << ": " << line;
  }
  for (int s = 0; s < 2; ++s) {
    logits_[s].clear();
    labels_[s].clear();
  }
  loss_sum_ = 0;
  loss_steps_ = samples_ = 0;
  train_seconds_ = eval_seconds_ = train_cpu_seconds_ = 0;
  step_seconds_.clear();
  last_ = now;
  return Status::OK();
}

Status DlrmTrainer::Resume(bool* resumed) {
  *resumed = false;
  StatusOr<DlrmCheckpointState> saved = ReadDlrmCheckpointState(o_.checkpoint_dir);
  if (!saved.ok() && saved.status().code() == StatusCode::kNotFound) {
    FS_LOG(INFO) << "resume: no complete checkpoint in " << o_.checkpoint_dir << " yet; starting from epoch 1";
    return Status::OK();
  }
  FS_RETURN_IF_ERROR(saved.status());
  if (saved->options_hash != checkpoint_.options_hash) {
    return FailedPrecondition("resume: the checkpoint in " + o_.checkpoint_dir +
                              " was written with different training options (" + saved->options.dump() +
                              ") than this run's (" + checkpoint_.options.dump() +
                              "); only epochs, threads, paths, eval_batch_size and the table store and cache "
                              "options may change");
  }
  if (saved->ranks != ranks_) {
    const auto ranks = [](int n) { return n == 1 ? std::string("1 rank") : std::to_string(n) + " ranks"; };
    return FailedPrecondition("resume: the checkpoint in " + o_.checkpoint_dir + " was written by " +
                              ranks(saved->ranks) + " (its tables in " + std::to_string(saved->ranks) +
                              " shard files) but this run has " + ranks(ranks_) + "; resume it on " +
                              ranks(saved->ranks) +
                              (saved->ranks == 1 ? " (without mpirun)"
                                                 : " (mpirun -np " + std::to_string(saved->ranks) + ")"));
  }
  if (ranks_ > 1 && saved->sharding != checkpoint_.sharding) {
    return FailedPrecondition("resume: the checkpoint in " + o_.checkpoint_dir + " holds tables split by " +
                              saved->sharding + " but this run splits them by " + checkpoint_.sharding +
                              "; resume with --sharding " + saved->sharding);
  }
  if (saved->table_rows != checkpoint_.table_rows) {
    return FailedPrecondition("resume: the checkpoint in " + o_.checkpoint_dir + " holds tables of " +
                              nlohmann::json(saved->table_rows).dump() + " rows but " + o_.dataset +
                              " has fields of " + nlohmann::json(checkpoint_.table_rows).dump());
  }
  FS_RETURN_IF_ERROR(
      LoadDlrmCheckpoint(o_.checkpoint_dir, *saved, model_.get(), optimizer_.get(), tables_, comm_->rank()));
  const nlohmann::json options = checkpoint_.options;
  checkpoint_ = std::move(saved).value();
  checkpoint_.options = options;  // the new epochs are what later saves record
  epochs_done_ = checkpoint_.epoch;
  best_epoch_ = checkpoint_.best_epoch;
  best_step_ = checkpoint_.best_step;
  best_val_auc_ = checkpoint_.best_val_auc;
  best_test_auc_ = checkpoint_.test_auc;
  best_test_logloss_ = checkpoint_.test_logloss;
  *resumed = true;
  if (epochs_done_ >= o_.epochs) {
    FS_LOG(INFO) << "resume: the run in " << o_.checkpoint_dir << " has finished (" << epochs_done_
                 << " epochs); nothing to train";
  }
  return Status::OK();
}

Status DlrmTrainer::Run(TrainSummary* out) {
  // The checkpoint directory is this run's until it returns; what killed
  // runs left half written in it goes first.
  // On several ranks rank 0 holds it for all; the others read the
  // checkpoint once it has cleaned up.
  std::unique_ptr<CheckpointDirLock> lock;
  if (!o_.checkpoint_dir.empty()) {
    FS_RETURN_IF_ERROR(OpenCheckpointDir(o_.checkpoint_dir, writer_, comm_, RemoveDlrmCheckpointLeftovers, &lock));
  }
  baseline_rss_ = CurrentRssBytes();
  FS_RETURN_IF_ERROR(OpenData());
  DlrmConfig mc;
  mc.num_dense = data_->num_dense();
  mc.num_tables = data_->num_fields();
  mc.embedding_dim = o_.embedding_dim;
  mc.bottom_mlp = o_.bottom_mlp;
  mc.top_mlp = o_.top_mlp;
  FS_ASSIGN_OR_RETURN(mc.interaction, kernels::ParseInteraction(o_.interaction));
  mc.dropout = o_.dropout;
  mc.seed = o_.seed;
  model_ = std::make_unique<DlrmModel>(mc);
  autograd::OptimizerOptions oo;
  oo.kind = o_.optimizer;
  oo.lr = o_.lr;
  oo.weight_decay = o_.weight_decay;
  FS_ASSIGN_OR_RETURN(optimizer_, autograd::Optimizer::Create(oo, model_->Parameters()));
  FS_ASSIGN_OR_RETURN(opened_, OpenDlrmTables(o_, *data_, *model_, baseline_rss_, comm_));
  tables_ = opened_.local();
  sharded_ = opened_.sharded.get();
  cache_bytes_ = opened_.cache_bytes;
  sparse_.kind = tables_->layout().optimizer;
  sparse_.lr = o_.sparse_lr;
  for (int64_t k = 0; k < data_->num_fields(); ++k) checkpoint_.table_rows.push_back(data_->field(k).rows);
  checkpoint_.embedding_dim = o_.embedding_dim;
  checkpoint_.sparse_optimizer = o_.sparse_optimizer;
  checkpoint_.options = DlrmOptionsToJson(o_);
  checkpoint_.options_hash = DlrmOptionsHash(o_);
  checkpoint_.ranks = ranks_;
  checkpoint_.sharding = ranks_ > 1 ? o_.sharding : "";
  bool resumed = false;
  if (o_.resume) FS_RETURN_IF_ERROR(Resume(&resumed));
  // With checkpoints, each metrics line is made durable before its epoch's
  // checkpoint commits (see MetricsWriter).
  if (!o_.metrics_file.empty() && writer_) {
    const bool durable = !o_.checkpoint_dir.empty();
    if (resumed) {
      FS_ASSIGN_OR_RETURN(metrics_, MetricsWriter::Resume(o_.metrics_file, epochs_done_, durable));
    } else {
      FS_ASSIGN_OR_RETURN(metrics_, MetricsWriter::Create(o_.metrics_file, durable));
    }
  }

  const storage::ClicksLayout& layout = data_->layout();
  schedule_ = std::make_unique<DlrmSchedule>(order_.get(), layout.val, layout.test, o_.eval_batch_size,
                                             o_.eval_every, epochs_done_, o_.epochs);
  own_display_ = o_.progress && writer_ && !callbacks_.on_batch && !callbacks_.on_epoch;
  if (resumed && epochs_done_ < o_.epochs) {
    if (own_display_) {
      std::fprintf(stderr, "resuming from epoch %d of %d: %d done in %s\n", epochs_done_ + 1, o_.epochs,
                   epochs_done_, o_.checkpoint_dir.c_str());
    } else {
      FS_LOG(INFO) << "resume: continuing from the checkpoint of epoch " << epochs_done_ << " in "
                   << o_.checkpoint_dir;
    }
  }
  last_ = Snapshot();
  loop_watch_.Lap();
  int current_epoch = -1;
  while (true) {
    FS_RETURN_IF_ERROR(Fill());
    if (window_.empty()) break;
    Inflight b = std::move(window_.front());
    window_.pop_front();
    if (b.item.kind == ScheduledItem::Kind::kReport) {
      FS_RETURN_IF_ERROR(Report(b.item));
      continue;
    }
    --batches_ahead_;
    if (b.item.kind == ScheduledItem::Kind::kTrain) {
      if (own_display_ && b.item.epoch != current_epoch) {
        current_epoch = b.item.epoch;
        ProgressOptions po;
        po.unit = "samples";
        progress_ = std::make_unique<Progress>(
            "epoch " + std::to_string(b.item.epoch + 1) + "/" + std::to_string(o_.epochs),
            layout.train.size(), po);
      }
      FS_RETURN_IF_ERROR(sharded_ != nullptr ? TrainShardedBatch(b) : TrainBatch(b));
    } else {
      FS_RETURN_IF_ERROR(sharded_ != nullptr ? EvalShardedBatch(b) : EvalBatch(b));
    }
  }
  FS_RETURN_IF_ERROR(tables_->Flush());

  out->epochs_completed = epochs_done_;
  out->best_epoch = best_epoch_;
  out->best_val_auc = std::max(best_val_auc_, 0.0);
  out->test_auc = best_test_auc_;
  out->test_logloss = best_test_logloss_;
  if (metrics_) {
    nlohmann::json f;
    f["final"] = true;
    f["best_epoch"] = best_epoch_;
    f["best_step"] = best_step_;
    f["val_auc"] = out->best_val_auc;
    f["test_auc"] = best_test_auc_;
    f["test_logloss"] = best_test_logloss_;
    f["epochs"] = epochs_done_;
    FS_RETURN_IF_ERROR(metrics_->WriteFinalText(f.dump()));
  }
  return Status::OK();
}

}  // namespace

Status TrainDlrm(const TrainOptions& options, const TrainCallbacks& callbacks, Communicator* comm,
                 TrainSummary* out) {
  DlrmTrainer trainer(options, callbacks, comm);
  return trainer.Run(out);
}

}  // namespace foresight::trainer::internal
