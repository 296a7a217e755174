#include "memory_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "../layerwise_inference.h"
#include "foresight/sampler/neighbor_sampler.h"

namespace foresight::trainer::internal {

namespace {

int64_t Bytes(const Tensor& t) { return t.defined() ? static_cast<int64_t>(t.nbytes()) : 0; }

// Upper bounds of one sampled batch: distinct input rows, block edges, and
// each block's destination rows (input side first).
struct BatchBound {
  int64_t rows = 0;
  int64_t edges = 0;
  std::vector<int64_t> dst;
};

// Probed sizes (the largest of several batches) get 25% headroom: later
// batches may be larger. Capped by the fanouts' worst case.
int64_t WithHeadroom(int64_t probed, int64_t worst) {
  return probed > 0 ? std::min(worst, probed + probed / 4) : worst;
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

}  // namespace

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

int64_t EvaluationLayerBytes(const MemoryInputs& in) {
  const TrainOptions& o = *in.options;
  const int64_t width = o.hidden * (o.model == "gat" ? o.heads : 1);
  const int64_t layers = 2 * in.dataset->num_nodes() * width * 4;
  return o.memory_budget > 0 ? std::min(layers, o.memory_budget / 8) : layers;
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
  // spread over at most two pages more). A touched page is resident whole.
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
  auto add = [&](const std::string& name, int64_t bytes) { e.items.push_back({name, std::max<int64_t>(0, bytes)}); };

  add("baseline", in.baseline_bytes);
  // Mapped arrays that sampling and labelling touch. The CSR scales with
  // the graph when mapped (every page read stays resident), with the batch
  // when paged (TopologyPagesBytes); labels and split ids stay mapped.
  const int64_t node_arrays =
      Bytes(d.labels()) + Bytes(d.train_ids()) + Bytes(d.val_ids()) + Bytes(d.test_ids());
  if (o.topology == "paged") {
    add("topology pages (per batch)", TopologyPagesBytes(in));
    add("labels and split ids (per graph)", node_arrays);
  } else {
    add("topology (per graph)", Bytes(d.indptr()) + Bytes(d.indices()) + node_arrays);
  }
  const int64_t feature_bytes = n * in.row_bytes;
  if (o.feature_store == "memory") {
    add("features (memory store)", feature_bytes);
  } else if (o.feature_store == "mmap") {
    add("features (mmap'd pages)", feature_bytes);
  } else {
    add("disk store buffers", static_cast<int64_t>(o.io_depth) * (256 << 10));
  }
  const int64_t optimizer_states = o.optimizer == "sgd" ? 1 : 2;
  add("model + optimizer", in.parameters * 4 * (2 + optimizer_states));
  // The cache planner's per-node index.
  add("planner index", n * 16);

  const BatchBound bb = BoundBatch(in, n, d.num_edges());
  // The sample stage's and evaluation's samplers: an id table each, sized
  // to the batch (8-byte entries, 16 on graphs of 2^31 nodes and more; at
  // least four times the nodes, a power of two: at most 8 entries per node),
  // of at least 4096 entries.
  const int64_t chunk_sources = MaxChunkSources(d.indptr(), o.eval_batch_size);
  const int64_t entry_bytes = sampler::IdTableEntryBytes(n);
  auto id_table = [&](int64_t nodes) { return std::max<int64_t>(8 * entry_bytes * nodes, 4096 * entry_bytes); };
  add("samplers' id tables", id_table(bb.rows) + id_table(o.eval_batch_size + chunk_sources));
  // A sampled batch's ids and blocks (as probed, else 8 bytes per row and
  // 16 per edge: i64 indices and indptr), plus its plan and the planner's
  // window record: a slot, a fetch entry, a key and a next-use link per row.
  const int64_t sampled = WithHeadroom(in.probe_batch_bytes, bb.rows * 8 + bb.edges * 16);
  const int64_t meta = sampled + bb.rows * 28;
  const int64_t x = bb.rows * f * 4;
  const int64_t bypass = bb.rows * in.row_bytes;
  // Batches alive at once: one in each of the five stage threads' hands and
  // the compute thread's, five queues, the planner's window (W + 1).
  const int64_t alive = 6 + 5 * cap + o.lookahead + 1;
  // x exists from assemble to compute, bypass rows from read to assemble.
  add("batches in flight", alive * meta + (cap + 2) * x + (cap + 2) * bypass);
  // Forward and backward of one batch: the input and its dropout copy,
  // then per layer its aggregated input and a few [dst rows, width]
  // activations, with their gradients during backward.
  int64_t compute = bb.rows * f * 4 * 2;
  int64_t in_width = f;
  for (const int64_t dst : bb.dst) {
    compute += dst * (in_width * 2 + width * 6) * 4;
    in_width = width;
  }
  // Layer-wise evaluation: two [N, width] layers, the logits of the
  // evaluated ids, and two chunks (one computing, the next one loading):
  // their source rows (with the buffer's slack, the ids and the read
  // requests) as bounded by the chunking, and the destinations' aggregated
  // input and outputs.
  const int64_t eval_rows = (d.val_ids().defined() ? d.val_ids().numel() : 0) +
                            (d.test_ids().defined() ? d.test_ids().numel() : 0);
  const int64_t wide = std::max(f, width) * 4;
  const int64_t chunks = 2 * chunk_sources * (wide + wide / 4 + 24) + o.eval_batch_size * (wide * 4 + 64);
  const int64_t evaluation = EvaluationLayerBytes(in) + eval_rows * d.num_classes() * 4 + chunks;
  // Evaluation holds the compute turn: a training step's activations and
  // evaluation's layers never exist at once.
  if (compute >= evaluation) {
    add("compute activations (> evaluation's " + FormatBytes(evaluation) + ")", compute);
  } else {
    add("evaluation (> compute activations' " + FormatBytes(compute) + ")", evaluation);
  }
  return e;
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
