#include "foresight/trainer/trainer.h"

#include <cstdio>
#include <memory>

#include "checkpoint.h"
#include "checkpoint_lock.h"
#include "dlrm_runner.h"
#include "link_gnn_trainer.h"
#include "link_trainer.h"
#include "sasrec_trainer.h"
#include "epoch_runner.h"
#include "foresight/core/cuda_streams.h"
#include "foresight/core/device.h"
#include "foresight/core/logging.h"
#include "foresight/core/process_memory.h"
#include "foresight/core/thread_pool.h"
#include "foresight/trainer/train_device.h"
#include "metrics_writer.h"
#include "node_data.h"
#include "node_input.h"
#include "progress_reporter.h"
#include "test_points.h"

namespace foresight::trainer {

using internal::CheckpointState;

namespace {

ModelConfig ModelConfigFor(const TrainOptions& o, const storage::Dataset& d, const internal::NodeInput& input) {
  ModelConfig c;
  c.kind = o.model;
  c.in_features = input.width;
  c.node_features = input.kind;
  c.input_table = input.table;
  c.num_classes = d.num_classes();
  c.hidden = o.hidden;
  c.layers = o.layers;
  c.heads = o.heads;
  c.dropout = o.dropout;
  c.input_dropout = o.input_dropout;
  c.seed = o.seed;
  return c;
}

// Restores model, optimizer, learned node features and progress from
// options.checkpoint_dir after checking that it was written by the same
// configuration. Sets *resumed to false, and leaves everything as it was,
// when the directory holds no complete checkpoint (a run killed before its
// first one finished): a restart script that always passes --resume then
// starts from epoch 1.
Status Resume(const TrainOptions& o, const CheckpointState& fresh, GnnModel* model,
              autograd::Optimizer* optimizer, internal::LearnedNodeTable* learned, CheckpointState* state,
              bool* resumed) {
  *resumed = false;
  StatusOr<CheckpointState> saved = internal::ReadCheckpointState(o.checkpoint_dir);
  if (!saved.ok() && saved.status().code() == StatusCode::kNotFound) {
    FS_LOG(INFO) << "resume: no complete checkpoint in " << o.checkpoint_dir << " yet; starting from epoch 1";
    return Status::OK();
  }
  FS_RETURN_IF_ERROR(saved.status());
  *state = std::move(saved).value();
  if (state->options_hash != fresh.options_hash) {
    return FailedPrecondition("resume: the checkpoint in " + o.checkpoint_dir +
                              " was written with different training options (" +
                              internal::JsonText(state->options) + ") than this run's (" +
                              internal::JsonText(fresh.options) +
                              "); only epochs, patience, threads, paths and eval_batch_size may change");
  }
  if (state->num_nodes != fresh.num_nodes ||
      internal::ModelConfigToJson(state->model) != internal::ModelConfigToJson(fresh.model)) {
    return FailedPrecondition("resume: the checkpoint in " + o.checkpoint_dir + " is for a model of " +
                              internal::JsonText(internal::ModelConfigToJson(state->model)) + " on " +
                              std::to_string(state->num_nodes) + " nodes, but this dataset gives " +
                              internal::JsonText(internal::ModelConfigToJson(fresh.model)) + " on " +
                              std::to_string(fresh.num_nodes) + " nodes");
  }
  FS_RETURN_IF_ERROR(internal::LoadParameters(o.checkpoint_dir, state->last_dir, model));
  FS_RETURN_IF_ERROR(internal::LoadOptimizerState(o.checkpoint_dir, state->last_dir, state->optimizer_steps,
                                                  optimizer));
  if (learned != nullptr) {
    FS_RETURN_IF_ERROR(learned->LoadRows(internal::LearnedRowsPath(o.checkpoint_dir, state->last_dir)));
  }
  state->options = fresh.options;  // the new epochs / patience are what later saves record
  *resumed = true;
  if (state->stopped_early || state->epoch >= o.epochs) {
    FS_LOG(INFO) << "resume: the run in " << o.checkpoint_dir << " has finished (" << state->epoch << " epochs"
                 << (state->stopped_early ? ", stopped early" : "") << "); nothing to train";
  }
  return Status::OK();
}

// What a GNN run does once it holds its checkpoint directory: the
// checkpoint.locked test point (kill_resume_test and checkpoint_fault_test
// count it), then the removal of what killed runs left half written.
Status RemoveLeftoversOnceLocked(const std::string& dir) {
  FS_RETURN_IF_ERROR(internal::TestPoint("checkpoint.locked"));
  return internal::RemoveCheckpointLeftovers(dir);
}

}  // namespace

Status Train(const TrainOptions& options, TrainSummary* out) {
  return Train(options, TrainCallbacks(), out);
}

Status Train(const TrainOptions& options, const TrainCallbacks& callbacks, TrainSummary* out) {
  FS_ASSIGN_OR_RETURN(Communicator * world, WorldCommunicator());
  return Train(options, callbacks, world, out);
}

Status Train(const TrainOptions& options, const TrainCallbacks& callbacks, Communicator* comm, TrainSummary* out) {
  FS_RETURN_IF_ERROR(options.Validate());
  FS_RETURN_IF_ERROR(CheckTrainDevice(options));
  *out = TrainSummary();
  const int ranks = comm->size();
  const bool shallow_link = options.task == "link" && !internal::IsGnnLinkModel(options.model);
  if (ranks > 1 && (options.task == "link" || options.model == "sasrec") && !shallow_link) {
    const std::string what = options.task == "link" ? "link prediction with the " + options.model + " encoder"
                                                    : options.model + " (its item table)";
    return Unimplemented("training on " + std::to_string(ranks) + " ranks: " + what +
                         " does not run on several ranks yet (its tables are not sharded); several ranks train "
                         "GNN node classification, dlrm and the shallow link models (distmult, complex, transe, "
                         "dot)");
  }
  const bool dlrm = options.model == "dlrm" && options.task != "link";
  if (shallow_link && options.sharding != "row") {
    return InvalidArgument("sharding: link prediction splits its entity and relation rows row-wise (" +
                           options.sharding + " is dlrm's); leave out --sharding");
  }
  if (!dlrm && !shallow_link && options.sharding != TrainOptions().sharding) {
    return InvalidArgument("sharding: splits the embedding tables of dlrm and the shallow link models between "
                           "ranks; " + options.model + " does not shard its tables (leave out --sharding)");
  }
  if (shallow_link && ranks > 1) {
    // Row-wise: an entity's row on rank id % N (the default --sharding).
    return internal::TrainLinkSharded(options, callbacks, comm, out);
  }
  if (dlrm) return internal::TrainDlrm(options, callbacks, comm, out);
  FS_RETURN_IF_ERROR(internal::CheckDataParallel(options, ranks));
  // Rank 0 alone writes the metrics file and the checkpoints.
  const bool writer = comm->rank() == 0;
  if (options.task == "link") {
    if (internal::IsGnnLinkModel(options.model)) return internal::TrainLinkGnn(options, callbacks, out);
    return internal::TrainLink(options, callbacks, out);
  }
  if (options.model == "sasrec") return internal::TrainSasrec(options, callbacks, out);
  // A click log given to a GNN: say which model reads it.
  StatusOr<storage::DatasetManifest> manifest = storage::ReadManifest(options.dataset + "/" + storage::kManifestFile);
  if (manifest.ok() && manifest->kind == storage::kKindClicks) {
    return InvalidArgument("model " + options.model + " trains on a graph, but " + options.dataset +
                           " is a clicks dataset (a click log); train it with --model dlrm");
  }
  // The checkpoint directory is this run's until it returns; what killed
  // runs left half written in it goes first. Every rank learns whether rank
  // 0 took it (a directory held by another run must fail them all, not
  // leave the others waiting for rank 0), and the others read a resumed
  // checkpoint once rank 0 has cleaned up.
  std::unique_ptr<internal::CheckpointDirLock> checkpoint_lock;
  if (!options.checkpoint_dir.empty()) {
    FS_RETURN_IF_ERROR(internal::OpenCheckpointDir(options.checkpoint_dir, writer, comm,
                                                   RemoveLeftoversOnceLocked, &checkpoint_lock));
  }
  ThreadPool pool(options.threads);
  // The device every op of the run is dispatched to (CheckTrainDevice has
  // refused what cannot run there); CUDA ops queue on the compute stream.
  FS_ASSIGN_OR_RETURN(const Device device, ParseDevice(options.device));
  if (!device.is_cpu() && ranks > 1) {
    return Unimplemented("device: " + device.ToString() + " requested on " + std::to_string(ranks) +
                         " ranks, but training on several ranks does not run on a GPU yet (one rank trains on "
                         "cuda); training does not fall back to the CPU");
  }
  ExecContext ctx = CpuContext(options.seed, &pool);
  ctx.device = device;
  ctx.stream_slot = kComputeSlot;

  internal::NodeData data;
  FS_RETURN_IF_ERROR(internal::OpenNodeData(options.dataset, &data));
  FS_ASSIGN_OR_RETURN(internal::NodeInput input, internal::OpenNodeInput(options.node_features, *data.dataset));
  const ModelConfig model_config = ModelConfigFor(options, *data.dataset, input);
  FS_ASSIGN_OR_RETURN(std::unique_ptr<GnnModel> model, CreateModel(model_config));
  // Initialised on the host (the same values on every device), then moved,
  // before the optimizer allocates its state beside each parameter.
  FS_RETURN_IF_ERROR(internal::MoveParametersTo(device, model.get()));
  autograd::OptimizerOptions optimizer_options;
  optimizer_options.kind = options.optimizer;
  optimizer_options.lr = options.lr;
  optimizer_options.weight_decay = options.weight_decay;
  FS_ASSIGN_OR_RETURN(std::unique_ptr<autograd::Optimizer> optimizer,
                      autograd::Optimizer::Create(optimizer_options, model->Parameters()));

  // Learned node features: their table (a file in a temporary directory
  // for mmap and disk stores unless --table-dir names one).
  std::unique_ptr<internal::TempDir> table_dir;
  if (input.is_learned()) {
    FS_ASSIGN_OR_RETURN(input.learned,
                        internal::OpenLearnedTable(options, data.dataset->num_nodes(), data.dataset->indptr(),
                                                   options.full_graph ? 0 : options.EffectiveLookahead(), &table_dir));
  }

  CheckpointState state;
  state.num_nodes = data.dataset->num_nodes();
  state.model = model_config;
  // Recorded with the ranks the partitions were split between (an N-rank
  // run resumes on N ranks, or on one with rank_partitions N).
  TrainOptions recorded = options;
  recorded.rank_partitions = internal::PartitionOwners(options, ranks);
  state.options = internal::TrainOptionsToJson(recorded);
  state.options_hash = internal::TrainingOptionsHash(recorded);
  bool resumed = false;
  if (options.resume) {
    CheckpointState fresh = state;
    FS_RETURN_IF_ERROR(
        Resume(options, fresh, model.get(), optimizer.get(), input.learned.get(), &state, &resumed));
  }

  // With checkpoints, each metrics line is made durable before its epoch's
  // checkpoint commits: see MetricsWriter for why that keeps the file exact.
  std::unique_ptr<internal::MetricsWriter> metrics;
  if (!options.metrics_file.empty() && writer && !options.plan_only) {
    const bool durable = !options.checkpoint_dir.empty();
    if (resumed) {
      FS_ASSIGN_OR_RETURN(metrics, internal::MetricsWriter::Resume(options.metrics_file, state.epoch, durable));
    } else {
      FS_ASSIGN_OR_RETURN(metrics, internal::MetricsWriter::Create(options.metrics_file, durable));
    }
  }

  // The runners report to the caller's observers or, when it gave none, to
  // the built-in progress display (a caller with observers draws its own).
  const bool own_display = options.progress && writer && !callbacks.on_batch && !callbacks.on_epoch;
  internal::ProgressReporter reporter(options.epochs);
  // One line says where a resumed run continues: the progress display's, or
  // the log's for callers that draw their own.
  if (resumed && !state.stopped_early && state.epoch < options.epochs) {
    if (own_display) {
      reporter.OnResume(state.epoch, options.checkpoint_dir);
    } else {
      FS_LOG(INFO) << "resume: continuing from the checkpoint of epoch " << state.epoch << " in "
                   << options.checkpoint_dir;
    }
  }
  TrainCallbacks observers;
  observers.on_batch = [&](int epoch, int64_t batch, int64_t num_batches, double loss) {
    if (own_display) reporter.OnBatch(epoch, batch, num_batches, loss);
    if (callbacks.on_batch) callbacks.on_batch(epoch, batch, num_batches, loss);  // epoch from 1
  };
  observers.on_stages = [&](const std::vector<std::pair<std::string, StageSeconds>>& stages) {
    if (own_display) reporter.OnStages(stages);
    if (callbacks.on_stages) callbacks.on_stages(stages);
  };

  internal::RunState run;
  run.ctx = ctx;
  run.options = &options;
  run.data = &data;
  run.input = &input;
  run.model = model.get();
  run.optimizer = optimizer.get();
  run.callbacks = &observers;
  internal::DataParallel data_parallel;
  data_parallel.comm = comm;
  data_parallel.bucket_bytes = options.allreduce_bucket;
  data_parallel.log = writer && options.progress;
  if (ranks > 1) run.data_parallel = &data_parallel;
  run.plan_out = out;
  FS_ASSIGN_OR_RETURN(std::unique_ptr<internal::EpochRunner> runner,
                      options.full_graph ? internal::MakeFullGraphRunner(run)
                                         : internal::MakeMiniBatchRunner(run));
  if (options.plan_only) return Status::OK();  // Init wrote the plan

  for (int epoch = state.epoch; epoch < options.epochs && !state.stopped_early; ++epoch) {
    EpochMetrics m;
    m.epoch = epoch + 1;
    Stopwatch watch;
    const double cpu_start = ProcessCpuSeconds();
    const int64_t faults_start = MinorFaults();
    FS_RETURN_IF_ERROR(runner->TrainEpoch(epoch, &m));
    m.epoch_seconds = watch.Lap();
    m.epoch_cpu_seconds = ProcessCpuSeconds() - cpu_start;
    m.epoch_minor_faults = MinorFaults() - faults_start;
    m.allreduce_seconds = data_parallel.allreduce_seconds;
    m.allreduce_bytes = data_parallel.allreduce_bytes;
    m.allreduce_steps = data_parallel.steps;
    if (ranks > 1 && writer && options.progress && data_parallel.steps > 0) {
      FS_LOG(INFO) << "epoch " << m.epoch << ": " << data_parallel.steps << " steps, gradient exchange "
                   << m.allreduce_seconds << " s of " << m.epoch_seconds << " s training ("
                   << data_parallel.allreduce_bytes / data_parallel.steps << " bytes per step and rank)";
    }
    if (ranks > 1 && options.progress && !options.full_graph) {
      // Each rank's own reads (the metrics lines carry rank 0's): with
      // --order partition, those of its partitions and their halo.
      FS_LOG(INFO) << "epoch " << m.epoch << " reads on this rank: " << m.rows_requested << " rows requested, "
                   << m.rows_read << " rows read (" << m.bytes_read << " bytes in " << m.reads_issued
                   << " reads), cache hits " << m.cache_hits << ", misses " << m.cache_misses << "; "
                   << "training " << m.epoch_seconds << " s for the global batches' " << m.seeds << " seeds";
    }
    data_parallel.allreduce_seconds = 0;
    data_parallel.allreduce_bytes = 0;
    data_parallel.steps = 0;
    FS_RETURN_IF_ERROR(runner->Evaluate(&m.val_acc, &m.test_acc));
    m.eval_seconds = watch.Lap();
    if (m.epoch_seconds > 0) {
      m.seeds_per_second = static_cast<double>(m.seeds) / m.epoch_seconds;
      m.sampled_edges_per_second = static_cast<double>(m.sampled_edges) / m.epoch_seconds;
    }

    state.epoch = epoch + 1;
    const bool improved = m.val_acc > state.best_val_acc;  // ties keep the first epoch
    if (improved) {
      state.best_epoch = m.epoch;
      state.best_val_acc = m.val_acc;
      state.test_acc = m.test_acc;
      state.epochs_since_best = 0;
    } else {
      ++state.epochs_since_best;
    }
    if (options.patience > 0 && state.epochs_since_best >= options.patience) state.stopped_early = true;

    out->history.push_back(m);
    // The line first, then the checkpoint (the order MetricsWriter relies on).
    if (metrics) FS_RETURN_IF_ERROR(metrics->WriteEpoch(m));
    FS_RETURN_IF_ERROR(internal::TestPoint("metrics.epoch-written"));
    if (!options.checkpoint_dir.empty() && writer) {
      FS_RETURN_IF_ERROR(internal::SaveCheckpoint(options.checkpoint_dir, *model, *optimizer, improved, &state,
                                                  input.learned.get()));
    }
    if (own_display) reporter.OnEpoch(m);
    if (callbacks.on_epoch) callbacks.on_epoch(m);
  }

  out->epochs_completed = state.epoch;
  out->stopped_early = state.stopped_early;
  out->best_epoch = state.best_epoch;
  out->best_val_acc = state.best_val_acc < 0 ? 0.0 : state.best_val_acc;
  out->test_acc = state.test_acc;
  if (data_parallel.buckets != nullptr && data_parallel.buckets->learned()) {
    out->gradient_bucket_order = data_parallel.buckets->fill_order();
  }
  FS_RETURN_IF_ERROR(internal::TestPoint("metrics.before-final"));
  if (metrics) FS_RETURN_IF_ERROR(metrics->WriteFinal(*out));
  return Status::OK();
}

}  // namespace foresight::trainer
