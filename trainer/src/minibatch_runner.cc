// Mini-batch training through the feature pipeline (pipeline/
// feature_pipeline.h): seeds in random or partition order, neighbourhoods
// sampled per (epoch, batch) W batches ahead, input features read from the
// feature store through the lookahead cache (or, for a memory or mmap
// store with no cache, gathered straight from its rows), the step on this
// thread;
// evaluation by layer-wise full-neighbour inference on the validation and
// test ids. The pipeline lives across epochs (its lookahead crosses epoch
// boundaries and keeps reading while an epoch is evaluated) and starts at
// the first epoch trained, so a resumed run picks up at its (epoch, batch).
#include <algorithm>
#include <memory>

#include "data_parallel.h"
#include "epoch_runner.h"
#include "foresight/cache/cache_planner.h"
#include "foresight/core/allocator.h"
#include "foresight/core/caching_allocator.h"
#include "foresight/core/logging.h"
#include "foresight/core/mapped_pages.h"
#include "foresight/core/test_kill_point.h"
#include "foresight/sampler/neighbor_sampler.h"
#include "foresight/sampler/partition_order.h"
#include "foresight/sampler/seed_order.h"
#include "foresight/trainer/feature_trace.h"
#include "layerwise_inference.h"
#include "learned_rows_store.h"
#include "pipeline/feature_pipeline.h"
#include "pipeline/memory_plan.h"
#include "pipeline/pipeline_setup.h"
#include "progress_reporter.h"
#include "rank_share_order.h"
#include "seed_orders.h"

namespace foresight::trainer::internal {

using autograd::GraphBlock;
using autograd::Tape;
using autograd::Var;

namespace {

constexpr int kQueueCapacity = 2;
constexpr int kMaxInFlight = kPipelineBatchesInFlight;  // cache-curve replays with it too

class MiniBatchRunner : public EpochRunner {
 public:
  explicit MiniBatchRunner(const RunState& state) : state_(state), whole_graph_(state.data->graph) {}

  Status Init() {
    const storage::Dataset& d = *state_.data->dataset;
    const TrainOptions& o = *state_.options;
    FS_RETURN_IF_ERROR(CheckInputOnDevice(*state_.input, state_.ctx.device, o.dataset));
    // Measured before anything of this run's size is allocated.
    const int64_t baseline = CurrentRssBytes() - MappedRssBytes(d.dir());
    sampler_ = std::make_unique<sampler::NeighborSampler>(state_.data->graph, o.fanouts, o.seed);
    if (o.topology == "paged") {
      FS_RETURN_IF_ERROR(sampler_->PageTopology());
      FS_RETURN_IF_ERROR(CheckNodeArraysReleasable(d));
    }
    FS_RETURN_IF_ERROR(OpenInputStore(o, d));
    // Layer-wise evaluation reads every node's in-neighbours' rows, in no
    // useful order: with O_DIRECT each 512-byte row would cost a 4 KiB disk
    // read, every epoch (minutes on a 1M-node graph). Its own buffered
    // store reads through the page cache instead (the kernel's reclaimable
    // memory, not this process's RSS), so repeated evaluations hit RAM when
    // the file fits there.
    if (o.feature_store == "disk" && store_ != nullptr) {
      FS_ASSIGN_OR_RETURN(eval_store_, OpenFeatureStore(o, d, /*buffered=*/true));
    }
    FS_RETURN_IF_ERROR(MakeOrder(d, o, o.cache_size >= 0 ? o.cache_size : o.memory_budget));
    eval_ids_ = ConcatIds(d.val_ids(), d.test_ids());
    FS_ASSIGN_OR_RETURN(eval_labels_, GatherLabels(d.labels(), eval_ids_));
    ReleaseNodeArrays(d);

    MemoryInputs mi;
    mi.dataset = &d;
    mi.options = &o;
    for (const autograd::Parameter* p : state_.model->Parameters()) mi.parameters += p->value().numel();
    mi.row_bytes = RowBytes();
    mi.input_width = state_.model->LayerInputDim(0);
    mi.queue_capacity = kQueueCapacity;
    mi.max_in_flight = kMaxInFlight;
    mi.sample_ahead = state_.input->learned != nullptr ? state_.input->learned->lookahead() + 1 : 0;
    mi.baseline_bytes = std::max<int64_t>(0, baseline);
    if (o.memory_budget > 0 || o.plan_only) FS_RETURN_IF_ERROR(ProbeBatches(&mi));
    if (o.plan_only) return WritePlan(mi);
    memory_ = EstimateMemory(mi);
    FS_ASSIGN_OR_RETURN(cache_bytes_, PlanCacheBytes(o, memory_));
    // What the budget leaves pays each slot's row and its planner records.
    const int64_t records = FeatureSlotBytes(o, d.num_nodes(), memory_);
    if (o.cache_size < 0) cache_bytes_ = CacheRowBytesWithin(cache_bytes_, RowBytes(), records);
    // More slots than rows would only cost planner memory.
    cache_bytes_ = std::min(cache_bytes_, d.num_nodes() * RowBytes());
    // The automatic group was sized by the budget (an upper bound of the
    // cache, which is only known now): size it by the cache itself, and
    // rebuild the order only when that changes the group.
    if (o.order == "partition" && o.resident_partitions == 0 && o.cache_size < 0 &&
        AutoGroupSize(partition_offsets_, RowBytes(), cache_bytes_) != group_size_) {
      FS_RETURN_IF_ERROR(MakeOrder(d, o, cache_bytes_));
      ReleaseNodeArrays(d);
    }
    LogOrder();
    FS_ASSIGN_OR_RETURN(cache_policy_, cache::ParsePolicy(o.cache_policy));
    if (o.memory_budget > 0) {
      FS_LOG(INFO) << "memory budget " << FormatBytes(o.memory_budget) << ": " << memory_.Describe()
                   << "; feature cache " << FormatBytes(cache_bytes_) << " + its slots' planner records "
                   << FormatBytes(cache_bytes_ / std::max<int64_t>(1, RowBytes()) * records)
                   << "; evaluation in chunks of "
                   << memory_.evaluation.chunk_size << " with " << FormatBytes(memory_.evaluation.layer_bytes)
                   << " of hidden layers in RAM";
    }
    return Status::OK();
  }

  // With a paged topology the labels and split ids are paged too: the
  // orders and evaluation keep their own copies of what they read, and the
  // pipeline gives back the label pages of each batch's seeds, so the
  // mapped arrays (about 0.5 GB at 100M nodes) are not resident.
  static Status CheckNodeArraysReleasable(const storage::Dataset& d) {
    FS_RETURN_IF_ERROR(CheckReleasableMapping(d.labels(), "paged topology: labels.npy"));
    FS_RETURN_IF_ERROR(CheckReleasableMapping(d.train_ids(), "paged topology: train_ids.npy"));
    FS_RETURN_IF_ERROR(CheckReleasableMapping(d.val_ids(), "paged topology: val_ids.npy"));
    return CheckReleasableMapping(d.test_ids(), "paged topology: test_ids.npy");
  }
  // Also the CSR's file pages that whole-array scans before sampling mapped
  // (degree features, a learned table's init, the plan's maximum degree,
  // the static cache's key order): the samplers never read the mapping
  // (PageShadow), and its arrays were checked by PageTopology.
  void ReleaseNodeArrays(const storage::Dataset& d) const {
    if (state_.options->topology != "paged") return;
    for (const Tensor* t : {&d.labels(), &d.train_ids(), &d.val_ids(), &d.test_ids(), &d.indptr(), &d.indices()}) {
      ReleaseMappedPages(*t);
    }
  }

  Status TrainEpoch(int epoch, EpochMetrics* m) override {
    const int64_t nb = order_->num_batches();
    const int64_t first = static_cast<int64_t>(epoch) * nb;
    if (pipeline_ == nullptr || next_seq_ != first) FS_RETURN_IF_ERROR(StartPipeline(first));
    double loss_sum = 0;
    int64_t correct = 0, counted = 0;
    LearnedNodeTable* learned = state_.input->learned.get();
    const LearnedNodeTable::Io learned_before = learned != nullptr ? learned->io() : LearnedNodeTable::Io();
    for (int64_t b = 0; b < nb; ++b) {
      BatchPtr batch;
      double waited = 0;
      FS_RETURN_IF_ERROR(pipeline_->Next(&batch, &waited));
      if (batch->seq != first + b) {
        return Internal("pipeline delivered batch " + std::to_string(batch->seq) + ", expected " +
                        std::to_string(first + b));
      }
      Stopwatch watch;
      StepResult r;
      // Learned rows: their window must be full before the compute turn
      // is taken (the sample stage that fills it may need that turn).
      if (state_.input->learned != nullptr) state_.input->learned->WaitReady();
      {
        auto turn = pipeline_->budget().ComputeTurn();
        // On a GPU the batch (blocks, input node ids, rows, labels) is
        // copied to it here; the CPU uses the pipeline's buffers as they are.
        const Device device = state_.ctx.device;
        FS_ASSIGN_OR_RETURN(const Tensor src_ids, OnDevice(batch->sampled.input_nodes, device));
        std::vector<GraphBlock> blocks;
        blocks.reserve(batch->sampled.blocks.size());
        for (kernels::Csr& csr : batch->sampled.blocks) {
          FS_RETURN_IF_ERROR(CsrOnDevice(device, &csr));
          blocks.emplace_back(std::move(csr));
          // Every layer's sources are a prefix of the input nodes: dropout
          // keys its masks by these node ids, so ranks sharing a global
          // batch draw its one-rank masks (sampling is keyed by node too).
          blocks.back().set_src_ids(src_ids);
        }
        std::vector<GraphBlock*> block_ptrs;
        for (GraphBlock& g : blocks) block_ptrs.push_back(&g);
        Tape tape(state_.ctx.WithRng(StepKey(state_.options->seed, epoch, b)), /*training=*/true);
        // Table inputs are the bags of the batch's input nodes' rows (the
        // pipeline reads no feature rows for them).
        FS_ASSIGN_OR_RETURN(const Tensor x_rows, OnDevice(batch->x, device));
        FS_ASSIGN_OR_RETURN(const Tensor labels, OnDevice(batch->labels, device));
        Var x(x_rows);
        if (state_.input->table) {
          FS_ASSIGN_OR_RETURN(x, InputRows(tape, *state_.model, *state_.input, batch->sampled.input_nodes));
        } else if (state_.input->learned != nullptr) {
          // The rows of the batch's input nodes, enqueued by the sample stage.
          // file+learned: the file's rows (the pipeline's x) beside them.
          const Tensor file_rows = state_.input->dense.defined() ? batch->x : Tensor();
          FS_ASSIGN_OR_RETURN(x, state_.input->learned->Forward(tape, state_.optimizer->step_count() + 1, file_rows));
          if (x.shape()[0] != batch->sampled.input_nodes.numel()) {
            return Internal("learned node features: " + std::to_string(x.shape()[0]) + " rows for a batch of " +
                            std::to_string(batch->sampled.input_nodes.numel()) + " input nodes");
          }
        }
        // x may come dropped out already (PipelineConfig::input_dropout:
        // never with table or learned inputs, whose x is not the batch's).
        const RngKey* x_dropped = batch->x_dropout_key.has_value() ? &*batch->x_dropout_key : nullptr;
        FS_RETURN_IF_ERROR(TrainStep(state_, tape, block_ptrs, x, labels, m, &r, x_dropped));
      }
      loss_sum += r.loss;
      correct += r.correct;
      counted += r.counted;
      m->seeds += r.seeds;
      m->sampled_edges += batch->sampled.sampled_edges;
      batch->x = Tensor();  // compute is done with the batch's buffers
      batch->sampled = sampler::SampledBatch();
      const double busy = watch.Lap();
      FS_RETURN_IF_ERROR(pipeline_->Done(std::move(batch), &waited));
      pipeline_->BookCompute(epoch, busy, waited);
      next_seq_ = first + b + 1;
      if (state_.callbacks->on_stages) state_.callbacks->on_stages(StagesOf(pipeline_->PeekEpoch(epoch)));
      if (state_.callbacks->on_batch) state_.callbacks->on_batch(epoch + 1, b, nb, r.loss);
      TestKillPoint("train.step");  // the multi-rank kill test's mid-epoch point
    }
    FS_RETURN_IF_ERROR(pipeline_->WaitReleased(first + nb - 1));
    if (first + nb == pipeline_->config().end_seq) FS_RETURN_IF_ERROR(pipeline_->Finish());
    const EpochAccount account = pipeline_->TakeEpoch(epoch);
    m->loss = nb == 0 ? 0.0 : loss_sum / static_cast<double>(nb);
    m->train_acc = counted == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(counted);
    // Less than a row holds none; with no feature rows (an input table) there is no cache.
    m->cache_bytes = RowBytes() > 0 && cache_bytes_ >= RowBytes() ? cache_bytes_ : 0;
    m->cache_hits = account.io.hits;
    m->cache_misses = account.io.misses;
    m->rows_requested = account.io.rows_requested;
    m->bytes_read = account.io.bytes_read;
    m->bytes_written = account.io.bytes_written;
    m->reads_issued = account.io.reads;
    m->rows_read = account.io.rows_read;
    if (learned != nullptr && !state_.input->dense.defined()) {
      // learned:DIM alone: the table's rows are the features read, through its cache.
      const LearnedNodeTable::Io now = learned->io();
      m->cache_bytes = learned->cache_bytes();
      m->cache_hits = now.hits - learned_before.hits;
      m->cache_misses = now.misses - learned_before.misses;
      m->rows_requested = now.rows_requested - learned_before.rows_requested;
      m->bytes_read = now.bytes_read - learned_before.bytes_read;
      m->reads_issued = now.reads - learned_before.reads;
      m->rows_read = now.rows_read - learned_before.rows_read;
      m->bytes_written = now.bytes_written - learned_before.bytes_written;
    }
    m->stages = StagesOf(account);
    m->bottleneck = Bottleneck(m->stages);
    // The phases of the old serial loop, from the stages that now overlap.
    m->sample_seconds = account.stages[static_cast<int>(Stage::kSample)].busy;
    m->gather_seconds = account.stages[static_cast<int>(Stage::kRead)].busy +
                        account.stages[static_cast<int>(Stage::kAssemble)].busy;
    return Status::OK();
  }

  Status Evaluate(double* val_acc, double* test_acc) override {
    const storage::Dataset& d = *state_.data->dataset;
    // Evaluation reads features from the training store: the read stage
    // pauses meanwhile (the sample and plan stages keep running ahead),
    // within the same CPU budget.
    std::unique_lock<std::mutex> store_lock, turn;
    if (pipeline_ != nullptr) {
      store_lock = pipeline_->LockStore();
      turn = pipeline_->budget().ComputeTurn();
    }
    // The host cache holds the training step's freed blocks, whose sizes
    // evaluation's layer-wise chunks never ask for: release them so they
    // do not sit beside evaluation's own buffers (the memory plan counts
    // compute and evaluation as never at once), and release evaluation's
    // afterwards for the same reason.
    HostCache()->Trim();
    struct TrimAfter {
      ~TrimAfter() { HostCache()->Trim(); }
    } trim_after;
    // Under a budget evaluation runs in the compute turn's bytes (the plan's
    // chunk size and hidden-layer RAM); without one, as the options say.
    InferenceMemory memory;
    int64_t chunk_size = state_.options->eval_batch_size;
    if (state_.options->memory_budget > 0) {
      memory.budget_bytes = memory_.evaluation.layer_bytes;
      chunk_size = memory_.evaluation.chunk_size;
    }
    LayerwiseOutputs outputs;
    // Table inputs: this evaluation's bags of every node, as rows in memory.
    std::unique_ptr<storage::RowStore> table_rows;
    if (state_.input->learned != nullptr && !state_.input->dense.defined()) {
      // learned:DIM alone: read from the table chunk by chunk, never all rows at once.
      FS_ASSIGN_OR_RETURN(table_rows, LearnedRowsStore::Open(state_.input->learned.get()));
    } else if (state_.input->table || state_.input->learned != nullptr) {
      Tensor all;
      if (state_.input->learned != nullptr) {
        FS_ASSIGN_OR_RETURN(all, state_.input->learned->AllEmbeddings());
        if (state_.input->dense.defined()) {
          FS_ASSIGN_OR_RETURN(Tensor file_rows, FeaturesAsF32(state_.ctx, state_.input->dense));
          all = ConcatColumns(file_rows, all);
        }
      } else {
        FS_ASSIGN_OR_RETURN(all, AllInputRows(state_.ctx, *state_.model, *state_.input));
      }
      FS_ASSIGN_OR_RETURN(table_rows, storage::MemoryRowStore(all, /*writable=*/false));
    }
    storage::RowStore& features = table_rows != nullptr ? *table_rows
                                  : eval_store_ != nullptr ? *eval_store_
                                                           : *store_;
    FS_RETURN_IF_ERROR(LayerwiseInference(state_.ctx, *state_.model, *sampler_, whole_graph_, features,
                                          chunk_size, {eval_ids_},
                                          /*want_embeddings=*/false, /*whole_graph_per_layer=*/false, memory,
                                          &outputs));
    const int64_t nv = d.val_ids().numel();
    const int64_t n = eval_ids_.numel();
    FS_ASSIGN_OR_RETURN(*val_acc, AccuracyOf(state_.ctx, outputs.logits[0].Slice(0, 0, nv),
                                             eval_labels_.Slice(0, 0, nv)));
    FS_ASSIGN_OR_RETURN(*test_acc, AccuracyOf(state_.ctx, outputs.logits[0].Slice(0, nv, n),
                                              eval_labels_.Slice(0, nv, n)));
    return Status::OK();
  }

 private:
  // The store training reads rows from: the dataset's features file (as
  // options.feature_store says), degree features held in memory, or none for
  // table inputs (sparse features, one-hot), which the step computes from
  // the input node ids. The store and cache options apply to stores only.
  Status OpenInputStore(const TrainOptions& o, const storage::Dataset& d) {
    const NodeInput& in = *state_.input;
    // learned:DIM alone: the table has the store and cache (learned_input.h).
    if (in.learned != nullptr && !in.dense.defined()) return Status::OK();
    if (in.table) {
      const char* store_option = nullptr;
      if (o.feature_store == "disk") store_option = "feature_store disk";
      else if (o.cache_size > 0) store_option = "cache_size";
      else if (o.memory_budget > 0) store_option = "memory_budget";
      if (store_option != nullptr) {
        return InvalidArgument(std::string(store_option) + " applies to feature rows read from a store; " +
                               (in.indptr.defined() ? "sparse features are read from the dataset's mapped CSR "
                                                      "arrays"
                                                    : "one-hot features are rows of the model's input table") +
                               " and go through the model's input table (leave it out)");
      }
      return Status::OK();
    }
    if (in.kind == "degree") {
      if (o.feature_store == "disk") {
        return InvalidArgument("feature_store disk reads the dataset's features file; degree features are "
                               "computed in memory (use memory or mmap)");
      }
      FS_ASSIGN_OR_RETURN(store_, storage::MemoryRowStore(in.dense, /*writable=*/false));
      host_rows_ = store_->host_rows();
      return Status::OK();
    }
    FS_ASSIGN_OR_RETURN(TrainingFeatures features, OpenTrainingFeatures(o, d));
    store_ = std::move(features.store);
    host_rows_ = std::move(features.host_rows);
    return Status::OK();
  }

  int64_t RowBytes() const { return store_ != nullptr ? store_->row_bytes() : 0; }

  // --plan-only: the plan as if under a budget (evaluation sized to the
  // compute turn), the cache the given budget would leave, and the
  // smallest budget the run accepts.
  Status WritePlan(MemoryInputs mi) {
    TrainOptions o = *state_.options;
    if (o.memory_budget <= 0) o.memory_budget = 1;  // any budget: the plan's shape under one
    mi.options = &o;
    const MemoryEstimate e = EstimateMemory(mi);
    TrainSummary* out = state_.plan_out;
    if (out == nullptr) return Internal("plan_only: no summary to write the plan to");
    out->minimum_budget_bytes =
        MinimumBudget(e, RowBytes() + FeatureSlotBytes(o, state_.data->dataset->num_nodes(), e));
    std::string text = "memory plan of " + o.dataset + " (" + std::to_string(o.batch_size) + " seeds a batch, " +
                       std::to_string(o.EffectiveLookahead()) + " batches of lookahead, " + o.feature_store +
                       " feature store):\n" + e.Table();
    text += "evaluation: chunks of " + std::to_string(e.evaluation.chunk_size) + " destinations, " +
            FormatBytes(e.evaluation.layer_bytes) + " of hidden layers in RAM (the rest in a scratch file)\n";
    if (state_.options->memory_budget > 0) {
      const int64_t left = state_.options->memory_budget - e.total();
      const int64_t records = FeatureSlotBytes(o, state_.data->dataset->num_nodes(), e);
      const int64_t rows = std::min(CacheRowBytesWithin(left, RowBytes(), records), AllRowsBytes());
      text += "feature cache under --memory-budget " + FormatBytes(state_.options->memory_budget) + ": " +
              (left > 0 ? FormatBytes(rows) + " + its slots' planner records " +
                              FormatBytes(rows / std::max<int64_t>(1, RowBytes()) * records)
                        : std::string("none (below the minimum)")) +
              "\n";
    }
    text += "smallest --memory-budget this run accepts: " + FormatBytes(out->minimum_budget_bytes) + "\n";
    out->memory_plan = text;
    return Status::OK();
  }
  int64_t AllRowsBytes() const { return state_.data->dataset->num_nodes() * RowBytes(); }

  // The memory a batch's tensor holds: its whole storage, as the input
  // nodes and a block's indices are views of buffers sized by a bound
  // (the sampler's growth, seeds x fanout per chunk).
  static int64_t TensorBytes(const Tensor& t) {
    if (!t.defined()) return 0;
    return static_cast<int64_t>(t.storage() != nullptr ? t.storage()->bytes() : t.nbytes());
  }

  // The largest input rows, edges, per-block destination rows and bytes of
  // 16 batches spread over the first epoch (full neighbourhoods: an upper
  // bound for resident sampling too).
  Status ProbeBatches(MemoryInputs* mi) {
    const int64_t nb = local_order_->num_batches();
    const int64_t probes = std::min<int64_t>(16, nb);
    for (int64_t k = 0; k < probes; ++k) {
      const int64_t b = k * nb / probes;
      sampler::SampledBatch batch;
      FS_RETURN_IF_ERROR(sampler_->Sample(state_.ctx, local_order_->Batch(0, b), 0, b, &batch));
      mi->probe_rows = std::max(mi->probe_rows, batch.input_nodes.numel());
      mi->probe_edges = std::max(mi->probe_edges, batch.sampled_edges);
      mi->probe_dst_rows.resize(std::max(mi->probe_dst_rows.size(), batch.blocks.size()), 0);
      int64_t bytes = TensorBytes(batch.input_nodes);
      for (size_t l = 0; l < batch.blocks.size(); ++l) {
        const kernels::Csr& block = batch.blocks[l];
        mi->probe_dst_rows[l] = std::max(mi->probe_dst_rows[l], block.num_dst());
        bytes += TensorBytes(block.indptr) + TensorBytes(block.indices) + TensorBytes(block.edge_weight);
      }
      mi->probe_batch_bytes = std::max(mi->probe_batch_bytes, bytes);
    }
    return Status::OK();
  }

  // `cache_bytes` sizes the automatic group (resident_partitions 0). Sets
  // order_ (the global batches) and local_order_ (this rank's part of
  // them: with several ranks, its share of each global batch, or under an
  // order split between the ranks, its batch from its own partitions).
  Status MakeOrder(const storage::Dataset& d, const TrainOptions& o, int64_t cache_bytes) {
    const int ranks = Ranks();
    group_size_ = 0;
    if (o.order == "partition") {
      FS_ASSIGN_OR_RETURN(partition_offsets_, PartitionOffsets(d));
      group_size_ = o.resident_partitions > 0 ? o.resident_partitions
                                              : AutoGroupSize(partition_offsets_, RowBytes(), cache_bytes);
    }
    FS_ASSIGN_OR_RETURN(SeedOrders orders, MakeSeedOrders(d, o, group_size_, PartitionOwners(o, ranks)));
    order_ = std::move(orders.order);
    partition_order_ = orders.partition;
    owned_order_ = orders.owned;
    share_order_.reset();
    local_order_ = order_.get();
    if (owned_order_ != nullptr && ranks > 1) {
      local_order_ = &owned_order_->Part(state_.data_parallel->comm->rank());
    } else if (ranks > 1) {
      share_order_ = std::make_unique<RankShareOrder>(order_.get(), state_.data_parallel->comm->rank(), ranks);
      local_order_ = share_order_.get();
    }
    return Status::OK();
  }

  int Ranks() const {
    return state_.data_parallel != nullptr ? state_.data_parallel->comm->size() : 1;
  }

  // Rank 0 (or the one process) logs the order and, when split, which
  // rank owns which partitions.
  void LogOrder() const {
    if (Ranks() > 1 && state_.data_parallel->comm->rank() != 0) return;
    if (partition_order_ != nullptr) {
      FS_LOG(INFO) << "partition order: " << partition_order_->num_partitions() << " partitions in groups of "
                   << partition_order_->group_size() << ", " << order_->num_batches() << " batches per epoch";
    }
    if (owned_order_ != nullptr) {
      FS_LOG(INFO) << "partition order split between " << owned_order_->owners() << " ranks, "
                   << order_->num_batches() << " global batches per epoch: " << owned_order_->Describe();
    }
  }

  // The hot tier's (or static policy's) rows: the highest in-degree rows
  // of the graph, or, on a rank that owns partitions, of its own
  // partitions (so it never reads rows its batches may not need).
  std::vector<int64_t> StaticKeys(const storage::Dataset& d, int64_t count) const {
    if (owned_order_ == nullptr || Ranks() == 1) return KeysByInDegree(d.indptr(), count);
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (int p : owned_order_->OwnerPartitions(state_.data_parallel->comm->rank())) {
      ranges.emplace_back(partition_offsets_[p], partition_offsets_[p + 1]);
    }
    return KeysByInDegree(d.indptr(), count, ranges);
  }

  Status StartPipeline(int64_t first_seq) {
    pipeline_.reset();  // stops a pipeline positioned elsewhere
    const storage::Dataset& d = *state_.data->dataset;
    const TrainOptions& o = *state_.options;
    PipelineConfig c;
    c.ctx = state_.ctx;
    // This rank samples and reads only its part of each global batch.
    c.order = local_order_;
    c.graph = state_.data->graph;
    c.page_topology = o.topology == "paged";
    c.fanouts = o.fanouts;
    c.seed = o.seed;
    if (o.sampling == "resident") c.resident_order = partition_order_;
    c.store = store_.get();
    c.host_rows = host_rows_;
    c.cache.policy = cache_policy_;
    c.cache.capacity_bytes = cache_bytes_;
    c.cache.row_bytes = RowBytes();
    c.cache.lookahead = o.EffectiveLookahead();
    c.cache.writable = false;
    c.cache.key_space = d.num_nodes();
    // The planner's index as the memory plan chose it: a map made for the
    // slots and the window's keys, or a flat array over the nodes.
    if (memory_.index_window_keys > 0 && RowBytes() > 0) {
      c.cache.window_index_keys = cache_bytes_ / RowBytes() + memory_.index_window_keys;
    }
    // Rows on one 4 KiB page of the disk store (.npy data starts page
    // aligned), so a miss's read can bring the page's other rows.
    constexpr int64_t kPage = 4096;
    if (o.feature_store == "disk" && o.page_companions == "on" && RowBytes() > 0 && RowBytes() <= kPage / 2 &&
        kPage % RowBytes() == 0) {
      c.cache.page_rows = kPage / RowBytes();
      c.cache.companion_rows = o.EffectiveCompanionSpan() / RowBytes();
    }
    // The static policy's rows, or the lookahead's static tier (a part of
    // the same slots: the cache term of the memory plan holds both tiers).
    const int64_t slots = RowBytes() > 0 ? cache_bytes_ / RowBytes() : 0;
    int64_t static_rows = 0;
    if (cache_policy_ == cache::Policy::kStatic) {
      static_rows = slots;
    } else if (cache_policy_ == cache::Policy::kLookahead) {
      c.cache.hot_slots = HotSlots(o, slots);
      static_rows = c.cache.hot_slots;
    }
    if (static_rows > 0 && o.hot_rank == "halo") {
      if (partition_order_ == nullptr) {
        // Split between owners, each owner's halo is its own partitions'
        // in-neighbours elsewhere, which a whole-graph ranking does not give.
        return InvalidArgument("hot_rank: halo ranks the whole graph's halo rows, which does not hold when the "
                               "partitions are split between ranks (rank_partitions " +
                               std::to_string(owned_order_ != nullptr ? owned_order_->owners() : 0) +
                               "); use hot_rank in-degree, which ranks each rank's own partitions");
      }
      FS_ASSIGN_OR_RETURN(c.static_keys, KeysByHaloDegree(c.graph, partition_offsets_, static_rows));
    } else if (static_rows > 0) {
      c.static_keys = StaticKeys(d, static_rows);
    }
    if (static_rows > 0) {
      // Ranking read every node's degree: give those CSR pages back.
      ReleaseNodeArrays(d);
    }
    // The model's first dropout moves into the direct path's gather when
    // layer 0 reads x as the pipeline gives it (not table or learned
    // inputs) and the step runs on the CPU: the key is the one the step's
    // tape draws first (TrainStep checks it).
    const float input_p = state_.model->config().InputDropout(0);
    if (input_p > 0.0f && !state_.input->table && state_.input->learned == nullptr && state_.ctx.device.is_cpu()) {
      c.input_dropout = input_p;
      const uint64_t seed = o.seed;
      const ExecContext ctx = state_.ctx;
      c.input_dropout_key = [seed, ctx](int64_t epoch, int64_t index) {
        return FirstStepRngKey(ctx, seed, static_cast<int>(epoch), index);
      };
    }
    c.labels = d.labels();
    c.batches_per_epoch = order_->num_batches();
    c.start_seq = first_seq;
    c.end_seq = static_cast<int64_t>(o.epochs) * order_->num_batches();
    c.queue_capacity = kQueueCapacity;
    c.max_in_flight = kMaxInFlight;
    if (state_.options->memory_budget > 0) {
      // The plan's x, resident from the start (its rows are probed then).
      c.reserved_inputs = memory_.inputs_alive;
      c.reserved_input_rows = memory_.input_rows;
    }
    if (LearnedNodeTable* learned = state_.input->learned.get()) {
      if (pipeline_started_) {
        // The table's window holds the first pipeline's batches.
        return Internal("learned node features: the pipeline cannot restart at batch " + std::to_string(first_seq));
      }
      c.on_sampled = [learned](int64_t, const Tensor& input_nodes) { return learned->Enqueue(input_nodes); };
      c.on_sample_end = [learned] { learned->Close(); };
      c.sample_ahead = learned->lookahead() + 1;
    }
    pipeline_started_ = true;
    FS_ASSIGN_OR_RETURN(pipeline_, FeaturePipeline::Start(std::move(c)));
    if (o.progress && !row_path_logged_) {
      FS_LOG(INFO) << "feature pipeline: " << pipeline_->row_path().reason;
      row_path_logged_ = true;  // a restarted pipeline takes the same path
    }
    next_seq_ = first_seq;
    return Status::OK();
  }

  static std::vector<std::pair<std::string, StageSeconds>> StagesOf(const EpochAccount& a) {
    std::vector<std::pair<std::string, StageSeconds>> out;
    for (int s = 0; s < kNumStages; ++s) out.emplace_back(StageName(static_cast<Stage>(s)), a.stages[s]);
    return out;
  }

  RunState state_;
  GraphBlock whole_graph_;  // gcn's evaluation: the normalised graph, built once
  // Builds evaluation's full-neighbour blocks (the sample stage has its own).
  std::unique_ptr<sampler::NeighborSampler> sampler_;
  std::unique_ptr<sampler::BatchOrder> order_;
  std::unique_ptr<RankShareOrder> share_order_;  // order_'s part for this rank (several ranks, not split)
  const sampler::BatchOrder* local_order_ = nullptr;  // what this rank samples and reads (order_ on one rank)
  const sampler::PartitionOrder* partition_order_ = nullptr;  // order_, when partition with one owner
  const sampler::OwnedPartitionOrder* owned_order_ = nullptr;  // order_, when split between ranks
  std::vector<int64_t> partition_offsets_;  // order partition: the dataset's
  int group_size_ = 0;  // order partition: partitions a group (before clamping)
  std::unique_ptr<storage::RowStore> store_;
  Tensor host_rows_;  // store_'s rows when in memory (memory, mmap): the direct row path reads them
  std::unique_ptr<storage::RowStore> eval_store_;  // disk only: buffered twin for evaluation
  MemoryEstimate memory_;
  int64_t cache_bytes_ = 0;
  cache::Policy cache_policy_ = cache::Policy::kLookahead;
  std::unique_ptr<FeaturePipeline> pipeline_;
  bool row_path_logged_ = false;
  bool pipeline_started_ = false;
  int64_t next_seq_ = -1;
  Tensor eval_ids_;
  Tensor eval_labels_;
};

}  // namespace

StatusOr<std::unique_ptr<EpochRunner>> MakeMiniBatchRunner(const RunState& state) {
  auto runner = std::make_unique<MiniBatchRunner>(state);
  FS_RETURN_IF_ERROR(runner->Init());
  return std::unique_ptr<EpochRunner>(std::move(runner));
}

}  // namespace foresight::trainer::internal

