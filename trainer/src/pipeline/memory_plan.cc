#include "memory_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "../layerwise_inference.h"
#include "../needed_rows.h"
#include "foresight/core/mapped_pages.h"
#include "foresight/sampler/neighbor_sampler.h"

namespace foresight::trainer::internal {

namespace {

int64_t Bytes(const Tensor& t) { return t.defined() ? static_cast<int64_t>(t.nbytes()) : 0; }

// Upper bounds of one sampled batch: distinct input rows, block edges, and
// each block's destination rows (input side first).
struct BatchBound {
  int64_t worst_rows = 0;  // the fanouts' worst case, whatever was probed
  int64_t rows = 0;
  int64_t edges = 0;
  std::vector<int64_t> dst;
};

// Probed sizes (the largest of batches spread over the first epoch) get
// 1/16 headroom: other batches may be a little larger (batches of one
// size, drawn alike, differ by a few percent). Capped by the fanouts'
// worst case.
int64_t WithHeadroom(int64_t probed, int64_t worst) {
  return probed > 0 ? std::min(worst, probed + probed / 16) : worst;
}

BatchBound BoundBatch(const MemoryInputs& in, int64_t num_nodes, int64_t num_edges) {
  const TrainOptions& o = *in.options;
  BatchBound b;
  // Destinations per hop, seeds outward: every destination draws at most f
  // neighbours (all of them for -1: at most the graph's edges in total).
  std::vector<int64_t> hop_dst;
  int64_t dst = std::min<int64_t>(o.batch_size, num_nodes);
  for (int64_t f : o.fanouts) {
    hop_dst.push_back(dst);
    const int64_t drawn = f < 0 ? num_edges : std::min<int64_t>(num_edges, dst * f);
    b.edges += drawn;
    dst = std::min<int64_t>(num_nodes, dst + drawn);
  }
  b.worst_rows = dst;
  b.rows = WithHeadroom(in.probe_rows, dst);
  b.edges = WithHeadroom(in.probe_edges, b.edges);
  // blocks[l] is hop (L - 1 - l): the input-side block has the most rows.
  const size_t layers = hop_dst.size();
  for (size_t l = 0; l < layers; ++l) {
    const int64_t worst = hop_dst[layers - 1 - l];
    const int64_t probed = l < in.probe_dst_rows.size() ? in.probe_dst_rows[l] : 0;
    b.dst.push_back(WithHeadroom(probed, worst));
  }
  return b;
}

// The feature cache planner's per-key index. lru and static keep a flat
// array over the nodes (8 bytes a node, touched as keys are met). Lookahead
// keeps either a flat array (24 bytes a node) or a map of the keys it holds
// (LookaheadWindowIndexBytesPerKey, 64 bytes a key): each slot's key, and
// the keys of the W + 1 batches it indexes ahead, counted at the fanouts'
// worst case, since the map must never outgrow what it was made for (a
// rehash holds two tables at once). At 100M nodes the array is 2.24 GiB;
// the map, for a window of 33 batches of up to 61k rows, 123 MiB plus 64
// bytes a slot. --planner-index flat or window says which; auto takes,
// under a budget, the layout that leaves the cache more rows; with
// --cache-size, the smaller; with neither (no cache to size) or at a
// budget too small for both, the one whose own bytes are fewer.
void AddPlannerIndex(const MemoryInputs& in, int64_t worst_rows, MemoryEstimate* e) {
  const TrainOptions& o = *in.options;
  const int64_t n = in.dataset->num_nodes();
  const cache::CacheConfig shape = PlannerShape(o, n);
  const int64_t flat = cache::PlannerIndexBytes(shape);
  bool window = false;
  const int64_t per_key = cache::LookaheadWindowIndexBytesPerKey();
  const int64_t window_keys = std::min<int64_t>(n, static_cast<int64_t>(o.EffectiveLookahead() + 1) * worst_rows);
  const int64_t window_bytes = window_keys * per_key + cache::LookaheadWindowIndexRoundingBytes();
  if (o.planner_index == "window") {
    window = shape.policy == cache::Policy::kLookahead;
  } else if (o.planner_index == "auto" && shape.policy == cache::Policy::kLookahead && in.row_bytes > 0) {
    const int64_t slot = in.row_bytes + cache::SlotRecordBytes(shape);
    const int64_t left = o.memory_budget - e->total();
    if (o.cache_size >= 0) {
      window = window_bytes + o.cache_size / in.row_bytes * per_key < flat;
    } else if (o.memory_budget > 0 && left > std::max(flat, window_bytes)) {
      window = (left - window_bytes) / (slot + per_key) > (left - flat) / slot;
    } else {
      window = window_bytes < flat;
    }
  }
  if (!window) {
    e->items.push_back({"planner index (an entry per node)", flat, MemoryScale::kGraph});
    return;
  }
  e->items.push_back({"planner index (the keys of " + std::to_string(o.EffectiveLookahead() + 1) + " batches; " +
                          std::to_string(per_key) + " B a slot more)",
                      window_bytes, MemoryScale::kBatch});
  e->index_window_keys = window_keys;
  e->index_bytes_per_slot = per_key;
}

}  // namespace

const char* MemoryScaleName(MemoryScale scale) {
  switch (scale) {
    case MemoryScale::kFixed: return "fixed";
    case MemoryScale::kGraph: return "graph";
    case MemoryScale::kBatch: return "batch";
  }
  return "?";
}

int64_t MemoryEstimate::total() const {
  int64_t t = 0;
  for (const MemoryItem& i : items) t += i.bytes;
  return t;
}

std::string MemoryEstimate::Describe() const {
  std::string s;
  for (const MemoryItem& i : items) s += (s.empty() ? "" : " + ") + i.name + " " + FormatBytes(i.bytes);
  return s + " = " + FormatBytes(total());
}

std::string MemoryEstimate::Table(const std::string& cache_name) const {
  std::string s;
  char line[256];
  for (const MemoryItem& i : items) {
    std::snprintf(line, sizeof(line), "  %-44s %12s  scales with the %s\n", i.name.c_str(),
                  FormatBytes(i.bytes).c_str(),
                  i.scale == MemoryScale::kFixed ? "process and model" : MemoryScaleName(i.scale));
    s += line;
  }
  std::snprintf(line, sizeof(line), "  %-44s %12s\n", ("total (without the " + cache_name + ")").c_str(),
                FormatBytes(total()).c_str());
  return s + line;
}

namespace {

// Two chunks' buffers (one computing, the next one loading) of `chunk`
// destinations: their source rows (the ids and the read requests) as
// bounded by the chunking (MaxChunkSources), and the destinations'
// aggregated input and outputs. A row buffer's slack (a quarter more rows,
// for growing chunks) is never written, so its pages are not resident.
int64_t EvalChunkBytes(int64_t chunk, int64_t max_in_degree, int64_t wide) {
  const int64_t sources = std::max(kChunkSourcesPerDestination * chunk + chunk, max_in_degree + 1);
  return 2 * sources * (wide + 24) + chunk * (wide * 4 + 64);
}

constexpr int64_t kMinEvalChunk = 512;

// With `release` (a paged topology's indptr, a checked read-only file
// mapping) the scan gives back each window's pages as it
// goes: at 100M nodes indptr is 800 MB, which would otherwise stay mapped.
int64_t MaxInDegree(const Tensor& indptr, bool release) {
  const int64_t* p = indptr.data<int64_t>();
  const int64_t n = indptr.numel();
  constexpr int64_t kWindow = int64_t{1} << 20;  // entries: 8 MiB
  int64_t max_degree = 0;
  for (int64_t begin = 0; begin + 1 < n; begin += kWindow) {
    const int64_t end = std::min(n - 1, begin + kWindow);
    for (int64_t v = begin; v < end; ++v) max_degree = std::max(max_degree, p[v + 1] - p[v]);
    if (release) ReleaseMappedPages(p + begin, static_cast<size_t>(end + 1 - begin) * 8);
  }
  return max_degree;
}

}  // namespace

EvaluationPlan PlanEvaluation(const MemoryInputs& in, int64_t compute_turn_bytes) {
  const storage::Dataset& d = *in.dataset;
  const TrainOptions& o = *in.options;
  const int64_t n = d.num_nodes();
  const int64_t f = in.input_width >= 0 ? in.input_width : d.feature_dim();
  const int64_t width = o.hidden * (o.model == "gat" ? o.heads : 1);
  const int64_t wide = std::max(f, width) * 4;
  const int64_t max_in_degree = MaxInDegree(
      d.indptr(), o.topology == "paged" && CheckReleasableMapping(d.indptr(), "indptr.npy").ok());
  EvaluationPlan p;
  // The logits of the evaluated ids, and the needed rows of each hidden
  // layer (NeededRows: a bit per node).
  const int64_t eval_rows = (d.val_ids().defined() ? d.val_ids().numel() : 0) +
                            (d.test_ids().defined() ? d.test_ids().numel() : 0);
  p.graph_bytes = eval_rows * d.num_classes() * 4 + NeededRowsBytes(n, o.layers);
  p.chunk_size = std::max<int64_t>(1, o.eval_batch_size);
  if (o.memory_budget <= 0) {
    p.chunk_bytes = EvalChunkBytes(p.chunk_size, max_in_degree, wide);
    p.layer_bytes = kDefaultInferenceBudgetBytes;
    return p;
  }
  // Under a budget evaluation runs in the compute turn's bytes: the chunk
  // shrinks until its buffers fit beside the graph-sized part, but not
  // below kMinEvalChunk destinations (smaller chunks cost more time per
  // row than they save: on a 200k-node R-MAT graph, chunks of 128 made
  // evaluation about 2x slower than chunks of 1024; then evaluation's item
  // is the larger one), and the hidden layers get what is left, spilling
  // the rest to the page cache.
  const int64_t floor = std::min(p.chunk_size, kMinEvalChunk);
  const int64_t room = compute_turn_bytes - p.graph_bytes;
  while (p.chunk_size > floor && EvalChunkBytes(p.chunk_size, max_in_degree, wide) > room) {
    p.chunk_size = std::max(floor, p.chunk_size / 2);
  }
  p.chunk_bytes = EvalChunkBytes(p.chunk_size, max_in_degree, wide);
  p.layer_bytes = std::max<int64_t>(0, room - p.chunk_bytes);
  return p;
}

int64_t TopologyPagesBytes(const MemoryInputs& in) {
  const storage::Dataset& d = *in.dataset;
  const TrainOptions& o = *in.options;
  const int64_t n = std::max<int64_t>(1, d.num_nodes());
  // Rows whose CSR entries one training batch reads: each hop's
  // destinations (the last hop's sources are only looked up, never read).
  int64_t rows = 0;
  int64_t dst = std::min<int64_t>(o.batch_size, n);
  for (int64_t f : o.fanouts) {
    rows += dst;
    dst = std::min<int64_t>(n, dst + (f < 0 ? d.num_edges() : dst * f));
  }
  // An evaluation chunk's destinations, read by evaluation's own sampler
  // while the training pipeline may still sample ahead.
  rows += std::min<int64_t>(o.eval_batch_size, n);
  // Each row: a page of indptr, and its in-neighbour list (the mean's bytes
  // spread over at most two pages more). The samplers pread exactly these
  // pages into anonymous memory (PageShadow) and free them after each call,
  // so the term holds whatever the page cache's folio size.
  const int64_t page = static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  const int64_t row_bytes =
      d.indices().defined() ? d.num_edges() / n * static_cast<int64_t>(d.indices().element_size()) : 0;
  const int64_t per_row = page + page * (1 + (row_bytes + page - 1) / page);
  const int64_t whole = static_cast<int64_t>((d.indptr().defined() ? d.indptr().nbytes() : 0) +
                                             (d.indices().defined() ? d.indices().nbytes() : 0));
  return std::min(whole, rows * per_row);
}

MemoryEstimate EstimateMemory(const MemoryInputs& in) {
  const storage::Dataset& d = *in.dataset;
  const TrainOptions& o = *in.options;
  const int64_t n = d.num_nodes();
  const int64_t f = in.input_width >= 0 ? in.input_width : d.feature_dim();
  const int64_t width = o.hidden * (o.model == "gat" ? o.heads : 1);
  const int64_t cap = in.queue_capacity;
  MemoryEstimate e;
  auto add = [&](const std::string& name, int64_t bytes, MemoryScale scale) {
    e.items.push_back({name, std::max<int64_t>(0, bytes), scale});
  };

  add("baseline", in.baseline_bytes, MemoryScale::kFixed);
  // Mapped arrays that sampling and labelling touch. The CSR scales with
  // the graph when mapped (every page read stays resident), with the batch
  // when paged (TopologyPagesBytes). Labels and split ids are paged with
  // it: what stays is the copies the orders (the training ids, as i64) and
  // evaluation (its ids and labels, i64) keep, and one batch's label pages.
  const int64_t node_arrays =
      Bytes(d.labels()) + Bytes(d.train_ids()) + Bytes(d.val_ids()) + Bytes(d.test_ids());
  if (o.topology == "paged") {
    add("topology pages", TopologyPagesBytes(in), MemoryScale::kBatch);
    const int64_t page = static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
    const int64_t eval_rows = (d.val_ids().defined() ? d.val_ids().numel() : 0) +
                              (d.test_ids().defined() ? d.test_ids().numel() : 0);
    add("training and evaluation ids, evaluation labels", d.train_ids().numel() * 8 + eval_rows * 16,
        MemoryScale::kGraph);
    add("label pages", std::min(Bytes(d.labels()), o.batch_size * page), MemoryScale::kBatch);
  } else {
    add("topology", Bytes(d.indptr()) + Bytes(d.indices()) + node_arrays, MemoryScale::kGraph);
  }
  const int64_t feature_bytes = n * in.row_bytes;
  if (o.feature_store == "memory") {
    add("features (memory store)", feature_bytes, MemoryScale::kGraph);
  } else if (o.feature_store == "mmap") {
    add("features (mmap'd pages)", feature_bytes, MemoryScale::kGraph);
  } else {
    // Bounce buffers of io_depth requests in two stores: training's
    // O_DIRECT one and evaluation's buffered twin (MinibatchRunner), whose
    // reads of whole in-neighbourhoods coalesce up to the full 256 KiB.
    add("disk store buffers (training and evaluation)", 2 * static_cast<int64_t>(o.io_depth) * (256 << 10),
        MemoryScale::kFixed);
  }
  const int64_t optimizer_states = o.optimizer == "sgd" ? 1 : 2;
  add("model + optimizer", in.parameters * 4 * (2 + optimizer_states), MemoryScale::kFixed);
  const BatchBound bb = BoundBatch(in, n, d.num_edges());
  // The sample stage's sampler: an id table sized to the batch (8-byte
  // entries, 16 on graphs of 2^31 nodes and more; at least four times the
  // nodes, a power of two: at most 8 entries per node), of at least 4096
  // entries. Evaluation's sampler has one sized to its chunk, counted in
  // the compute turn it runs in.
  const int64_t entry_bytes = sampler::IdTableEntryBytes(n);
  auto id_table = [&](int64_t nodes) { return std::max<int64_t>(8 * entry_bytes * nodes, 4096 * entry_bytes); };
  add("sampler's id table", id_table(bb.rows), MemoryScale::kBatch);
  // A sampled batch's ids and blocks (as probed, else 8 bytes per row and
  // 16 per edge: i64 indices and indptr), plus its plan and the planner's
  // window record: a slot, a fetch entry, a key and a next-use link per row.
  const int64_t sampled = WithHeadroom(in.probe_batch_bytes, bb.rows * 8 + bb.edges * 16);
  const int64_t meta = sampled + bb.rows * 28;
  const int64_t x = bb.rows * f * 4;
  // f32 rows of a read-only store (the node features) are read around the
  // cache straight into x (feature_pipeline.h, BypassIntoX): no bypass
  // buffer. f16 rows are widened from one by assemble.
  const bool bypass_in_x = in.row_bytes == f * 4;
  const int64_t bypass = bypass_in_x ? 0 : bb.rows * in.row_bytes;
  // Sampled batches alive at once: the sample stage's, the sampled queue's
  // (with sample_ahead), the plan stage's window (W + 1) and the planned
  // ones not yet released (max_in_flight: planning batch t waits for the
  // release of t - max_in_flight, so every later stage together holds no
  // more). x exists from read (bypass rows into x) or assemble to the
  // batch's release: at most max_in_flight, and at most what the queues and
  // the stages' hands between hold (read: 2 queues and 3 stages; assemble:
  // the assembled queue, assemble and compute); bypass rows of one batch
  // beside them (the one being assembled).
  const int64_t sampled_alive = 1 + cap + std::max(0, in.sample_ahead) + o.EffectiveLookahead() + 1 + in.max_in_flight;
  const int64_t x_alive = std::min<int64_t>(in.max_in_flight, bypass_in_x ? 2 * cap + 3 : cap + 2);
  add("batches in flight", sampled_alive * meta + x_alive * x + bypass, MemoryScale::kBatch);
  e.inputs_alive = static_cast<int>(x_alive);
  e.input_rows = bb.rows;
  // Forward and backward of one batch: the input's dropout copy (the input
  // itself is the batch's x, counted above), then per layer its aggregated
  // input and a few [dst rows, width] activations, with their gradients
  // during backward.
  int64_t compute = bb.rows * f * 4;
  int64_t in_width = f;
  for (const int64_t dst : bb.dst) {
    compute += dst * (in_width * 2 + width * 6) * 4;
    in_width = width;
  }
  // Evaluation holds the compute turn: a training step's activations and
  // evaluation's chunks and layers never exist at once. Under a budget
  // evaluation is sized to the step's bytes; when even its smallest chunk
  // and graph-sized part need more, its item is the larger one.
  const EvaluationPlan eval = PlanEvaluation(in, compute);
  const int64_t evaluation = eval.chunk_bytes + eval.graph_bytes + (o.memory_budget > 0 ? 0 : eval.layer_bytes);
  if (compute >= evaluation) {
    add("compute turn (training step; evaluation in chunks of " + std::to_string(eval.chunk_size) + ")", compute,
        MemoryScale::kBatch);
    e.compute_turn_bytes = compute;
    e.evaluation = eval;
  } else {
    add("compute turn (evaluation: " + FormatBytes(eval.graph_bytes) + " by the graph, chunks of " +
            std::to_string(eval.chunk_size) + ")",
        evaluation, eval.graph_bytes > eval.chunk_bytes ? MemoryScale::kGraph : MemoryScale::kBatch);
    e.compute_turn_bytes = evaluation;
    e.evaluation = PlanEvaluation(in, evaluation);
  }
  // Last: which index leaves the cache more depends on what the rest takes.
  AddPlannerIndex(in, bb.worst_rows, &e);
  return e;
}

cache::CacheConfig PlannerShape(const TrainOptions& options, int64_t num_nodes) {
  cache::CacheConfig c;
  // The options are checked before any plan is made.
  StatusOr<cache::Policy> policy = cache::ParsePolicy(options.cache_policy);
  c.policy = policy.ok() ? *policy : cache::Policy::kLookahead;
  c.key_space = std::max<int64_t>(1, num_nodes);
  return c;
}

int64_t FeatureSlotBytes(const TrainOptions& options, int64_t num_nodes, const MemoryEstimate& estimate) {
  return cache::SlotRecordBytes(PlannerShape(options, num_nodes)) + estimate.index_bytes_per_slot;
}

int64_t CacheRowBytesWithin(int64_t bytes, int64_t row_bytes, int64_t record_bytes) {
  if (bytes <= 0 || row_bytes <= 0) return 0;
  return bytes / (row_bytes + std::max<int64_t>(0, record_bytes)) * row_bytes;
}

int64_t MinimumBudget(const MemoryEstimate& estimate, int64_t row_bytes) {
  const int64_t mib = int64_t{1} << 20;
  const int64_t need = estimate.total() + std::max<int64_t>(1, row_bytes);
  return (need + mib - 1) / mib * mib;
}

StatusOr<int64_t> PlanCacheBytesWithin(const TrainOptions& options, const MemoryEstimate& estimate,
                                       const std::string& cache_name, const std::string& minimum_advice) {
  const int64_t other = estimate.total();
  if (options.cache_size >= 0) {
    if (options.memory_budget > 0 && other + options.cache_size > options.memory_budget) {
      return ResourceExhausted("memory_budget: " + FormatBytes(options.memory_budget) + " cannot hold cache_size " +
                               FormatBytes(options.cache_size) + " on top of the run's estimated " +
                               estimate.Describe() + "; lower --cache-size or raise --memory-budget");
    }
    return options.cache_size;
  }
  if (options.memory_budget <= 0) return int64_t{0};
  if (other >= options.memory_budget) {
    return ResourceExhausted("memory_budget: " + FormatBytes(options.memory_budget) +
                             " cannot hold the run's minimum (no " + cache_name + "): " + estimate.Describe() + "; " +
                             minimum_advice);
  }
  return options.memory_budget - other;
}

StatusOr<int64_t> PlanCacheBytes(const TrainOptions& options, const MemoryEstimate& estimate) {
  return PlanCacheBytesWithin(
      options, estimate, "feature cache",
      "raise --memory-budget, or lower --batch-size, --fanouts, --lookahead" +
          (options.feature_store == "disk" ? std::string() : std::string(" or use --feature-store disk")));
}

std::string FormatBytes(int64_t bytes) {
  char buf[64];
  const double b = static_cast<double>(bytes);
  if (bytes >= (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", b / (1 << 30));
  } else if (bytes >= (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", b / (1 << 20));
  } else if (bytes >= 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", b / 1024);
  } else {
    std::snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(bytes));
  }
  return buf;
}

}  // namespace foresight::trainer::internal
