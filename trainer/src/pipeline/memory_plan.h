// The memory plan of mini-batch training under --memory-budget: an itemised
// estimate of the process's peak RSS apart from the feature cache, and the
// cache size that the budget leaves. Each item is what that part can hold at
// once (queue depths times the per-batch size), so the run stays inside the
// budget. The per-batch size is measured on the first batches (with
// headroom), capped by the fanouts' worst case. Private to the trainer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/process_memory.h"
#include "foresight/cache/cache_planner.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/storage/dataset.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer::internal {

// What a term grows with, for --plan-only: the process and the model
// (fixed), the graph's node or edge count (graph), or the batch size,
// fanouts and lookahead (batch).
enum class MemoryScale { kFixed, kGraph, kBatch };
const char* MemoryScaleName(MemoryScale scale);

struct MemoryItem {
  std::string name;
  int64_t bytes = 0;
  MemoryScale scale = MemoryScale::kFixed;
};

// How layer-wise evaluation runs inside the compute turn's bytes: the
// destinations per chunk (eval_batch_size, halved until two chunks' buffers
// fit in what the turn leaves beside the graph-sized part, but not below
// 512 or eval_batch_size when that is less), and
// the RAM its hidden layers may hold (what the turn leaves beside the
// chunks; the rest spills to a scratch file in the page cache).
struct EvaluationPlan {
  int64_t chunk_size = 0;
  int64_t layer_bytes = 0;
  int64_t chunk_bytes = 0;   // two chunks' buffers at chunk_size
  int64_t graph_bytes = 0;   // logits of the evaluated ids and the needed-rows index
  int64_t total() const { return chunk_bytes + graph_bytes + layer_bytes; }
};

struct MemoryEstimate {
  std::vector<MemoryItem> items;
  int64_t total() const;
  // "baseline 41.2 MiB + topology 80.0 MiB + ... = 300.1 MiB"
  std::string Describe() const;
  // One line per item, "  topology                 80.0 MiB  graph", then
  // the total "without the <cache_name>" (for --plan-only).
  std::string Table(const std::string& cache_name = "feature cache") const;
  // The compute turn's bytes: the training step's activations, which
  // evaluation uses too (they never run at once), and how evaluation runs
  // in them (PlanEvaluation).
  int64_t compute_turn_bytes = 0;
  EvaluationPlan evaluation;
  // The feature cache planner's index (its item is "planner index"):
  // index_window_keys 0 is a flat array over the nodes; otherwise a map of
  // the keys the planner holds, made for the cache's slots plus
  // index_window_keys keys of the batches it indexes ahead
  // (cache::CacheConfig::window_index_keys), each slot paying
  // index_bytes_per_slot beside its row and records (FeatureSlotBytes).
  int64_t index_window_keys = 0;
  int64_t index_bytes_per_slot = 0;
  // The x the "batches in flight" item counts: inputs_alive batches' x of
  // input_rows rows each (PipelineConfig::reserved_inputs).
  int inputs_alive = 0;
  int64_t input_rows = 0;
};

struct MemoryInputs {
  const storage::Dataset* dataset = nullptr;
  const TrainOptions* options = nullptr;
  int64_t parameters = 0;      // model parameter elements
  // The largest input rows and block edges seen on a few sampled batches
  // (0 = unknown: the fanouts' worst case is used).
  int64_t probe_rows = 0;
  int64_t probe_edges = 0;
  // The largest destination rows of each block on those batches, input
  // side first (blocks[l].num_dst); empty = the fanouts' worst case.
  std::vector<int64_t> probe_dst_rows;
  // The largest bytes of a probed batch's ids and blocks (0 = unknown).
  int64_t probe_batch_bytes = 0;
  int64_t row_bytes = 0;       // the feature store's row (0: no store, table inputs)
  // Width of x, the first layer's input (degree features and the input
  // table differ from the dataset's feature_dim). -1: feature_dim.
  int64_t input_width = -1;
  int queue_capacity = 2;      // the pipeline's
  int max_in_flight = 4;
  int sample_ahead = 0;        // PipelineConfig::sample_ahead
  // Measured RSS of the process now, minus the dataset's mapped arrays
  // resident in it (they are counted as their own items).
  int64_t baseline_bytes = 0;
};

MemoryEstimate EstimateMemory(const MemoryInputs& in);

// `compute_turn_bytes`: MemoryEstimate::compute_turn_bytes; with no budget
// (0 or less) the chunk is eval_batch_size and the layers get
// kDefaultInferenceBudgetBytes.
EvaluationPlan PlanEvaluation(const MemoryInputs& in, int64_t compute_turn_bytes);

// The smallest --memory-budget this estimate accepts: its items and a
// feature cache of one row (rounded up to a whole MiB).
int64_t MinimumBudget(const MemoryEstimate& estimate, int64_t row_bytes);

// With topology "paged": the CSR pages one training batch and one
// evaluation chunk load (4 KiB pages read into anonymous memory), which the
// samplers free after each call; at most the whole CSR. Scales with the batch and the mean
// degree, not the node count.
int64_t TopologyPagesBytes(const MemoryInputs& in);

// The cache capacity in bytes for `options`: cache_size when given (>= 0;
// checked against the budget when there is one), else what memory_budget
// leaves after `estimate` (ResourceExhausted listing the items when it
// leaves nothing), else 0.
StatusOr<int64_t> PlanCacheBytes(const TrainOptions& options, const MemoryEstimate& estimate);
// The feature cache planner's shape for `options` on a graph of
// `num_nodes`: its policy and dense node keys (for PlannerIndexBytes and
// SlotRecordBytes).
cache::CacheConfig PlannerShape(const TrainOptions& options, int64_t num_nodes);
// What a feature cache slot costs beside its row: the planner's records
// (cache::SlotRecordBytes) and, with the window index, its key's entry.
int64_t FeatureSlotBytes(const TrainOptions& options, int64_t num_nodes, const MemoryEstimate& estimate);
// The row bytes of a cache given `bytes` of a budget when every slot pays
// its row and `record_bytes` of planner records (cache::SlotRecordBytes):
// whole slots only. With 32-byte rows the records take 44% of the bytes.
int64_t CacheRowBytesWithin(int64_t bytes, int64_t row_bytes, int64_t record_bytes);
// The same rule for any cache (the GNN feature cache, the DLRM table cache):
// when not even the minimum fits, the message names "no <cache_name>" and
// ends with `minimum_advice` (what the user can change).
StatusOr<int64_t> PlanCacheBytesWithin(const TrainOptions& options, const MemoryEstimate& estimate,
                                       const std::string& cache_name, const std::string& minimum_advice);

// "1.5 GiB", "12.0 MiB", "512 B".
std::string FormatBytes(int64_t bytes);

}  // namespace foresight::trainer::internal
