// FeaturePipeline: the mini-batch trainer's input pipeline. Stages joined
// by bounded queues, each on its own thread (waiting passively), feed the
// compute stage, which is the caller's thread. How a batch's input rows get
// from the feature store into its x is the pipeline's row path, chosen once
// at Start (ChooseRowPath; row_path() says which and why, for the log):
//
// kCached (any store, any cache):
//
//   sample --q--> plan --q--> read --q--> assemble --q--> [compute] --q--> write back
//
//   sample      seeds of batch (epoch, b) from the order, neighbourhoods from
//               its own NeighborSampler; runs ahead across epoch boundaries
//   plan        CachePlanner::Submit of every sampled batch's input rows,
//               PlanNext once W more batches are known (the lookahead window)
//   read        executes a plan on the RowStore: write-backs, then fetches
//               into cache slots and bypass rows into the batch's own buffer
//               (f32 read-only features: straight into their rows of x)
//   assemble    the f32 input x (rows from slots or the bypass buffer) and
//               the seeds' labels; x's blocks are reused (InputBuffers)
//   compute     Next() / Done() around the training step (the caller)
//   write back  writes rows a batch changed (WriteRows; writable stores
//               only: node features are read-only, so there it only
//               releases), then releases the batch's cache slots
//
// kDirect (the store's rows are in this process's memory, i.e. a memory or
// mmap store given as config.host_rows, and there is no cache: no slots,
// read-only):
//
//   sample --q--> read --q--> [compute] --q--> write back
//
//   read        gathers x straight from the store's rows with the threaded
//               gather kernel (one copy, f16 widened) and the seeds' labels:
//               the work of read and assemble at once, booked as read; with
//               config.input_dropout the gather drops x out as well (the
//               model's first dropout, done here instead of in the step)
//   plan, assemble   not run: they book no time
//
// With no cache a plan is "every row bypasses", so the planner and the
// bypass buffer (a second copy) buy nothing when the rows are addressable.
// Both paths give a batch the same x bit for bit (before the model's first
// dropout, which the direct path may apply and the step otherwise does,
// with the same key and bits) and the same counters
// (BatchIo: rows_requested, hits = 0, misses = rows_requested, bytes_read =
// the bytes a memory / mmap store's Read of those rows reports).
//
// Memory: every queue holds at most `queue_capacity` batches; the plan
// stage holds at most W + 1 sampled batches (the window); at most
// `max_in_flight` batches are planned and not yet released, so their pinned
// slots and bypass buffers are bounded too. The direct path holds x from
// read to compute and no bypass buffers; the cached path holds x from read
// (bypass rows into x) or assemble to the batch's release, so at most
// max_in_flight x at once (the write-back stage drops a batch before it
// marks it released), and its InputBuffers keep no more blocks than that.
//
// Determinism: a batch's x is the store's rows whatever the row path,
// store, policy, cache size, window or thread count, and whichever thread
// runs a step (the compute thread runs stage steps while it waits,
// PipelineConfig::compute_helps), and batches reach compute in order.
// Plans themselves are a pure function of the key lists: the plan stage
// applies the release of batch t - max_in_flight (and only those) before
// planning batch t, so the pinned set, and the I/O counts, never depend on
// timing.
//
// CPU budget: see cpu_budget.h. Errors: the first stage to fail stops every
// stage; Next() and WaitReleased() return that error, naming the stage.
// Private to the trainer.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bounded_queue.h"
#include "cpu_budget.h"
#include "foresight/cache/cache_planner.h"
#include "foresight/core/context.h"
#include "foresight/kernels/csr.h"
#include "foresight/sampler/neighbor_sampler.h"
#include "foresight/sampler/partition_order.h"
#include "foresight/sampler/seed_order.h"
#include "foresight/storage/row_store.h"
#include "input_buffers.h"
#include "slot_arena.h"
#include "stage_clock.h"
#include "stage_worker.h"

namespace foresight::trainer::internal {

// One mini-batch on its way through the stages.
struct PipelineBatch {
  int64_t seq = 0;    // epoch * batches_per_epoch + index
  int64_t epoch = 0;  // counted from 0
  int64_t index = 0;  // batch within the epoch
  sampler::SampledBatch sampled;
  cache::BatchPlan plan;
  // Rows read around the cache: plan.bypass[j]'s row at j * row_bytes;
  // empty when the read stage puts them in x (BypassIntoX: x is then
  // taken by the read stage, bypass row i at x's row i).
  std::vector<uint8_t> bypass_rows;
  // Per key position: its index in plan.bypass, or -1 (a cache slot).
  std::vector<int32_t> bypass_index;
  Tensor x;       // f32 [input rows, F]
  // Set when x is the model's dropped-out input already, dropped with this
  // key (the direct path with config.input_dropout; see there).
  std::optional<RngKey> x_dropout_key;
  Tensor labels;  // i64 [seeds]
  BatchIo io;
  bool wrote = false;  // compute changed rows (never for node features)
};
using BatchPtr = std::unique_ptr<PipelineBatch>;

// How input rows reach x (see above).
enum class RowPath { kCached, kDirect };

struct PipelineConfig {
  ExecContext ctx;  // its pool is the CPU budget
  const sampler::BatchOrder* order = nullptr;  // outlives the pipeline
  kernels::Csr graph;                          // by destination, whole graph
  bool page_topology = false;                  // the sampler gives back the CSR pages of each batch, and
                                               // the label gathers the label pages
  std::vector<int64_t> fanouts;
  uint64_t seed = 0;
  // Resident sampling (--sampling resident): batch (e, b) samples only
  // in-neighbours inside resident_order->ResidentPartitions(e, b). Null =
  // full neighbourhoods. Outlives the pipeline.
  const sampler::PartitionOrder* resident_order = nullptr;
  // Node features; outlives the pipeline. Null: no rows to read (table
  // inputs, trainer/src/node_input.h): the direct path with batches' x left
  // undefined, no cache, and zero I/O counters.
  storage::RowStore* store = nullptr;
  // The store's rows as a host tensor [N, F] of its dtype, when they are
  // addressable in memory (memory, mmap: TrainingFeatures::host_rows):
  // exactly the bytes store->Read returns. Undefined: rows only via Read.
  Tensor host_rows;
  // The model's dropout of its first layer's input (p in (0, 1)), done by
  // the direct path's gather: kernels::GatherRowsDropout keyed by the input
  // nodes with input_dropout_key(epoch, index), the key batch (epoch,
  // index)'s step draws for that dropout. x is then written once and never
  // read back for the dropout, off the compute thread; the batch carries
  // the key (x_dropout_key) and the step checks it against its own. The
  // cached path leaves the dropout to the step (the same bits). Default:
  // 0, none.
  float input_dropout = 0.0f;
  std::function<RngKey(int64_t epoch, int64_t index)> input_dropout_key;
  // Tests: run the cache planner even where the direct path applies.
  bool force_cache_planner = false;
  cache::CacheConfig cache;            // row_bytes = store->row_bytes()
  std::vector<int64_t> static_keys;    // policy static, or cache.hot_slots > 0: keys by priority
  Tensor labels;                       // i32/i64 [N]
  int64_t batches_per_epoch = 0;
  int64_t start_seq = 0;  // first batch (a resumed run starts mid-way)
  int64_t end_seq = 0;    // one past the last batch
  // Batches each queue holds. Default: 2
  int queue_capacity = 2;
  // Called by the sample stage with each batch's sequence number and input
  // nodes, in order, before the batch enters the queues; an error stops
  // the pipeline. on_sample_end runs when the sample stage ends, however it
  // ends. Learned node features enqueue their lookahead window here
  // (trainer/src/learned_input.h). Default: none
  std::function<Status(int64_t seq, const Tensor& input_nodes)> on_sampled;
  std::function<void()> on_sample_end;
  // Extra batches the sampled queue holds, so the sample stage may run that
  // many batches further ahead of compute (a consumer of on_sampled that
  // needs a window of W batches asks for W). Default: 0
  int sample_ahead = 0;
  // Batches planned and not yet released (their slots pinned). Default: 4
  int max_in_flight = 4;
  // Next() works for the pool while it waits for a batch
  // (ThreadPool::HelpUntil: chunks of the stages' loops, queued stage
  // steps), so the compute thread's core does not idle while the pool's
  // workers sample and gather. No effect with a budget of one thread.
  // Batches are the same bits either way. Default: true
  bool compute_helps = true;
  // The cached path's x blocks made resident at Start (InputBuffers::
  // Reserve): under a memory budget, the x the plan counts (its batches
  // alive at once, of its per-batch input rows), so the run holds what the
  // plan reserved whichever stage is the slowest. Default: none
  int reserved_inputs = 0;
  int64_t reserved_input_rows = 0;
};

// The row path for `config` and why, e.g. "direct gather from the mmap
// store's rows in memory (no cache): ..." or "cache planner: 4096-slot
// lookahead cache". Direct exactly when host_rows is defined, the cache has
// no slot and is read-only, and force_cache_planner is off.
struct RowPathChoice {
  RowPath path = RowPath::kCached;
  std::string reason;
};
RowPathChoice ChooseRowPath(const PipelineConfig& config);

class FeaturePipeline {
 public:
  // Validates the config, allocates the slot arena and starts the stages.
  static StatusOr<std::unique_ptr<FeaturePipeline>> Start(PipelineConfig config);
  // Stops and joins every stage (cancelling whatever is in flight).
  ~FeaturePipeline();
  FeaturePipeline(const FeaturePipeline&) = delete;
  FeaturePipeline& operator=(const FeaturePipeline&) = delete;

  // The next batch for the compute stage, in sequence order. Adds the time
  // waited to *waited (with config.compute_helps, the time spent running
  // pipeline work while no batch was ready counts as waited). Returns the failing stage's error, or OutOfRange
  // after end_seq.
  Status Next(BatchPtr* batch, double* waited);
  // Compute changed the batch's input rows (writable caches only): row i of
  // `rows` (contiguous f32 [input rows, F], like x) becomes input node i's
  // row, narrowed to the store's dtype, in its cache slot or its bypass
  // buffer; Done then writes the bypass rows to the store and marks the
  // slot rows dirty (written back when a later plan evicts them, or by
  // Finish). Call between Next and Done, on the compute thread.
  // FailedPrecondition on a read-only pipeline; InvalidArgument on a shape
  // or dtype that is not x's.
  Status WriteRows(PipelineBatch* batch, const Tensor& rows);
  // Hands a computed batch to the write-back stage.
  Status Done(BatchPtr batch, double* waited);
  // Blocks until batch `seq` and all before it are written back and
  // released; the pipeline's error if it failed first.
  Status WaitReleased(int64_t seq);
  // After end_seq was released: joins the stages and writes back rows still
  // dirty in the cache (writable stores), then flushes the store.
  Status Finish();

  // The epoch's stage seconds and I/O (call after WaitReleased of its last
  // batch); the compute stage books its own time with BookCompute.
  void BookCompute(int64_t epoch, double busy, double wait) {
    ledger_.AddTime(Stage::kCompute, epoch, busy, wait);
  }
  EpochAccount TakeEpoch(int64_t epoch) { return ledger_.Take(epoch); }
  // The sums so far (for a progress display).
  EpochAccount PeekEpoch(int64_t epoch) { return ledger_.Peek(epoch); }

  CpuBudget& budget() { return budget_; }
  // Exclusive use of the feature store (the read and write-back stages
  // pause meanwhile): for evaluation reading the same store. Lock order:
  // the store first, then budget().ComputeTurn() (as the read stage does).
  std::unique_lock<std::mutex> LockStore() { return std::unique_lock<std::mutex>(store_mu_); }
  int64_t num_slots() const { return arena_ != nullptr ? arena_->num_slots() : 0; }
  const RowPathChoice& row_path() const { return row_path_; }
  const PipelineConfig& config() const { return config_; }

 private:
  explicit FeaturePipeline(PipelineConfig config);
  Status Init();
  Status InitCached();
  Status InitDirect();
  void StartStages();
  void StopStages();

  // Stage bodies (each in its own file).
  Status RunSample(StageWorker& w);
  Status RunPlan(StageWorker& w);
  Status RunRead(StageWorker& w);
  Status RunAssemble(StageWorker& w);
  Status RunWriteBack(StageWorker& w);
  Status RunDirectRead(StageWorker& w);  // kDirect's read stage

  // Plan stage helpers: applies planner releases up to `through`.
  Status ApplyReleases(int64_t through);
  // Read stage: one plan's I/O.
  Status ExecutePlan(PipelineBatch* b);
  // The read stage reads bypass rows straight into x (taking x there):
  // f32 rows, a read-only cache.
  bool BypassIntoX() const {
    return config_.store->dtype() == DType::kF32 && !config_.cache.writable;
  }
  // Assemble stage: x and labels.
  Status Assemble(PipelineBatch* b);
  // Direct read stage: x gathered from host_rows, labels, and the counters.
  Status GatherDirect(PipelineBatch* b);
  // b->labels: the labels of b's seeds (direct_read_stage.cc).
  Status GatherBatchLabels(PipelineBatch* b);
  // The rows of `reqs` moved, counting device bytes; the caller holds
  // store_mu_ (so the deltas of the store's counters are this call's).
  Status StoreRead(const std::vector<storage::RowRequest>& reqs, BatchIo* io);
  Status StoreWrite(const std::vector<storage::RowRequest>& reqs, BatchIo* io);

  PipelineConfig config_;
  RowPathChoice row_path_;
  CpuBudget budget_;
  bool helps_ = false;  // Next() runs pool work while it waits (compute_helps, more than one thread)
  PipelineControl control_;
  EpochLedger ledger_;
  std::unique_ptr<SlotArena> arena_;               // kCached only
  InputBuffers inputs_;                            // kCached: the batches' x
  std::unique_ptr<cache::CachePlanner> planner_;  // kCached only; the plan stage's while running
  int64_t planner_released_through_ = -1;         // releases given to the planner
  bool copy_store_ = false;  // reads are CPU copies (memory, mmap): run them as CPU steps
  std::mutex store_mu_;      // read and write-back stages (and evaluation) take turns on the store
  std::mutex wrote_mu_;
  std::map<int64_t, bool> wrote_;  // seq -> its batch wrote rows (write back -> plan)

  BoundedQueue<BatchPtr> sampled_, planned_, read_, assembled_, done_;
  std::vector<std::unique_ptr<StageWorker>> workers_;
  bool finished_ = false;
};

}  // namespace foresight::trainer::internal
