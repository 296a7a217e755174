#include "memory_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace foresight::trainer::internal {

namespace {

int64_t Bytes(const Tensor& t) { return t.defined() ? static_cast<int64_t>(t.nbytes()) : 0; }

// Upper bounds of one sampled batch: distinct input rows and block edges.
struct BatchBound {
  int64_t rows = 0;
  int64_t edges = 0;
};

// The fanouts' worst case, or the probed sizes with 50% headroom when
// smaller.
BatchBound BoundBatch(const MemoryInputs& in, int64_t num_nodes, int64_t num_edges) {
  const TrainOptions& o = *in.options;
  BatchBound b;
  int64_t dst = std::min<int64_t>(o.batch_size, num_nodes);
  for (int64_t f : o.fanouts) {
    // Every destination draws at most f neighbours (all of them for -1: at
    // most the graph's edges in total).
    const int64_t drawn = f < 0 ? num_edges : std::min<int64_t>(num_edges, dst * f);
    b.edges += drawn;
    dst = std::min<int64_t>(num_nodes, dst + drawn);
  }
  b.rows = dst;
  if (in.probe_rows > 0) b.rows = std::min(b.rows, in.probe_rows + in.probe_rows / 2);
  if (in.probe_edges > 0) b.edges = std::min(b.edges, in.probe_edges + in.probe_edges / 2);
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
  return o.memory_budget > 0 ? std::min(layers, o.memory_budget / 4) : layers;
}

MemoryEstimate EstimateMemory(const MemoryInputs& in) {
  const storage::Dataset& d = *in.dataset;
  const TrainOptions& o = *in.options;
  const int64_t n = d.num_nodes();
  const int64_t f = d.feature_dim();
  const int64_t width = o.hidden * (o.model == "gat" ? o.heads : 1);
  const int64_t cap = in.queue_capacity;
  MemoryEstimate e;
  auto add = [&](const std::string& name, int64_t bytes) { e.items.push_back({name, std::max<int64_t>(0, bytes)}); };

  add("baseline", in.baseline_bytes);
  // Mapped arrays that sampling and labelling touch: all of them end up
  // resident.
  add("topology", Bytes(d.indptr()) + Bytes(d.indices()) + Bytes(d.labels()) + Bytes(d.train_ids()) +
                      Bytes(d.val_ids()) + Bytes(d.test_ids()));
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
  // The sample stage's and evaluation's samplers (4 bytes per node each),
  // and the cache planner's per-node index.
  add("sampler + planner index", n * (4 + 4 + 16));

  const BatchBound bb = BoundBatch(in, n, d.num_edges());
  const int64_t meta = bb.rows * 40 + bb.edges * 16;  // ids, plan, blocks
  const int64_t x = bb.rows * f * 4;
  const int64_t bypass = bb.rows * in.row_bytes;
  // Batches alive at once: one in each of the five stage threads' hands and
  // the compute thread's, five queues, the planner's window (W + 1).
  const int64_t alive = 6 + 5 * cap + o.lookahead + 1;
  // x exists from assemble to compute, bypass rows from read to assemble.
  add("batches in flight", alive * meta + (cap + 2) * x + (cap + 2) * bypass);
  // Forward and backward of one batch: the input (dropout copy, grad) and
  // per layer a few [rows, width] activations and their grads.
  add("compute activations", bb.rows * f * 4 * 2 + bb.rows * width * 4 * 6 * o.layers);
  // Layer-wise evaluation: two [N, width] layers, the logits of the
  // evaluated ids and one chunk's block.
  const int64_t eval_rows = (d.val_ids().defined() ? d.val_ids().numel() : 0) +
                            (d.test_ids().defined() ? d.test_ids().numel() : 0);
  add("evaluation", EvaluationLayerBytes(in) + eval_rows * d.num_classes() * 4 +
                        o.eval_batch_size * (std::max(f, width) * 4 + 64));
  return e;
}

StatusOr<int64_t> PlanCacheBytes(const TrainOptions& options, const MemoryEstimate& estimate) {
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
    return ResourceExhausted(
        "memory_budget: " + FormatBytes(options.memory_budget) + " cannot hold the run's minimum (no feature cache): " +
        estimate.Describe() + "; raise --memory-budget, or lower --batch-size, --fanouts, --lookahead" +
        (options.feature_store == "disk" ? std::string() : std::string(" or use --feature-store disk")));
  }
  return options.memory_budget - other;
}

int64_t CurrentRssBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long long size = 0, resident = 0;
  const int got = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  if (got != 2) return 0;
  return static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

int64_t MappedRssBytes(const std::string& dir) {
  FILE* f = std::fopen("/proc/self/smaps", "r");
  if (f == nullptr) return 0;
  const std::string prefix = dir.empty() || dir.back() == '/' ? dir : dir + "/";
  int64_t total = 0;
  bool in_dir = false;
  char line[4096];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    long long kb = 0;
    if (std::sscanf(line, "Rss: %lld kB", &kb) == 1) {
      if (in_dir) total += kb * 1024;
      continue;
    }
    // A mapping's header: "start-end perms offset dev inode [path]".
    unsigned long long start = 0, end = 0;
    if (std::sscanf(line, "%llx-%llx ", &start, &end) == 2) {
      const char* slash = std::strchr(line, '/');
      in_dir = slash != nullptr && !prefix.empty() && std::strncmp(slash, prefix.c_str(), prefix.size()) == 0;
    }
  }
  std::fclose(f);
  return total;
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
