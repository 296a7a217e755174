// PartitionDataset: checks, the memory plan, the assignment (METIS or
// Fennel), the renumbered dataset written through storage::DatasetWriter
// (a staging dir renamed into place), and the report.
#include "foresight/graph/partition.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>

#include "foresight/core/logging.h"
#include "foresight/core/stopwatch.h"
#include "foresight/storage/dataset.h"
#include "partition_io.h"
#include "partitioners.h"
#include "node_order.h"
#include "renumber.h"

namespace foresight::graph {
namespace {

using internal::SourceDataset;

constexpr size_t kMiB = size_t{1} << 20;
// Buffers when the budget does not constrain them.
constexpr size_t kDefaultReadChunk = 16 * kMiB;
constexpr size_t kDefaultWriteBuffers = 32 * kMiB;
// The smallest buffers a run accepts.
constexpr size_t kMinBuffers = 2 * kMiB;

std::string Bytes(int64_t b) {
  char buf[64];
  const double v = static_cast<double>(b);
  if (v >= 1e9) {
    std::snprintf(buf, sizeof(buf), "%.2f GB", v / 1e9);
  } else if (v >= 1e6) {
    std::snprintf(buf, sizeof(buf), "%.1f MB", v / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%lld bytes", static_cast<long long>(b));
  }
  return buf;
}

Status CheckOptions(const PartitionOptions& o) {
  if (o.parts < 1) return InvalidArgument("--parts must be >= 1, got " + std::to_string(o.parts));
  if (o.method != "metis" && o.method != "stream") {
    return InvalidArgument("--method must be \"metis\" or \"stream\", got \"" + o.method + "\"");
  }
  if (!(o.imbalance >= 0.0) || !std::isfinite(o.imbalance)) {
    return InvalidArgument("imbalance must be a finite number >= 0, got " + std::to_string(o.imbalance));
  }
  FS_RETURN_IF_ERROR(internal::ParseNodeOrder(o.node_order).status());
  if (o.memory_budget_bytes < 0) {
    return InvalidArgument("--memory-budget must be >= 0, got " + std::to_string(o.memory_budget_bytes));
  }
  return Status::OK();
}

// Buffers and the refusal of budgets below the floor. `fixed` is what the
// run holds besides its buffers at its largest phase.
struct MemoryPlan {
  size_t read_chunk = kDefaultReadChunk;
  size_t write_buffers = kDefaultWriteBuffers;
};

StatusOr<MemoryPlan> PlanMemory(const SourceDataset& src, const PartitionOptions& o, int64_t baseline) {
  const int64_t n = src.num_nodes;
  const int64_t isz = src.indices_i64() ? 8 : 4;
  // Renumbering: the source indptr (8 B a node), part (4), new ids (8), new
  // indptr (8); the longest row twice (read and mapped copies).
  // A node order's ranks (8 B a node) stay through the renumbering; bfs
  // also reads the neighbour lists before it starts.
  FS_ASSIGN_OR_RETURN(const internal::NodeOrder order, internal::ParseNodeOrder(o.node_order));
  const int64_t ranks = order == internal::NodeOrder::kNone ? 0 : 8 * n;
  const int64_t renumber = 28 * n + ranks + 2 * src.max_degree * isz;
  const int64_t ordering = internal::NodeOrderMemory(src, order);
  if (ordering > 0 && o.memory_budget_bytes > 0 && baseline + ordering > o.memory_budget_bytes) {
    return ResourceExhausted("--node-order " + o.node_order + " needs an estimated " + Bytes(baseline + ordering) +
                             " for " + std::to_string(n) + " nodes and " + std::to_string(src.num_edges) +
                             " edges, over --memory-budget " + Bytes(o.memory_budget_bytes) +
                             (order == internal::NodeOrder::kBfs ? "; --node-order degree needs 16 bytes a node"
                                                                 : ""));
  }
  int64_t fixed = renumber;
  if (o.method == "metis") {
    const int64_t metis = internal::MetisMemoryEstimate(n, src.num_edges) + 12 * n;
    if (o.memory_budget_bytes > 0 && baseline + metis > o.memory_budget_bytes) {
      return ResourceExhausted(
          "metis needs an estimated " + Bytes(baseline + metis) + " for " + std::to_string(n) + " nodes and " +
          std::to_string(src.num_edges) + " edges (the symmetrised graph and METIS's coarsening copies), over "
          "--memory-budget " + Bytes(o.memory_budget_bytes) +
          "; use --method stream, which needs O(N) memory (about " + Bytes(baseline + renumber) + " here)");
    }
    fixed = std::max(fixed, metis);
  }
  MemoryPlan plan;
  if (o.memory_budget_bytes == 0) return plan;
  const int64_t avail = o.memory_budget_bytes - baseline - renumber;
  if (avail < static_cast<int64_t>(kMinBuffers)) {
    return ResourceExhausted("partition needs at least " + Bytes(baseline + renumber + kMinBuffers) + " for " +
                             std::to_string(n) + " nodes (28 bytes a node, the longest row, " +
                             Bytes(static_cast<int64_t>(kMinBuffers)) + " of buffers, this process's " +
                             Bytes(baseline) + "), over --memory-budget " + Bytes(o.memory_budget_bytes));
  }
  // The edge pass holds the read chunk, its mapped copy and the P region
  // buffers: 3/8 + 3/8 of what is left, the rest is slack for the heap,
  // thread stacks and the split ids.
  plan.read_chunk = std::clamp<size_t>(static_cast<size_t>(avail * 3 / 16), 256 << 10, kDefaultReadChunk);
  plan.write_buffers = std::clamp<size_t>(static_cast<size_t>(avail * 3 / 8), 512 << 10, kDefaultWriteBuffers);
  return plan;
}

nlohmann::json PartitionsJson(const PartitionReport& r, const PartitionOptions& o) {
  return {{"method", r.method},
          {"parts", r.parts},
          {"offsets", r.offsets},
          {"num_edges", r.num_edges},
          {"edge_cut", r.edge_cut},
          {"cut_fraction", r.cut_fraction},
          {"balance", r.balance},
          {"imbalance", o.imbalance},
          {"seed", o.seed},
          {"node_order", o.node_order},
          {"seconds", r.seconds},
          {"peak_rss_bytes", r.peak_rss_bytes}};
}

}  // namespace

StatusOr<PartitionReport> PartitionDataset(const ExecContext& ctx, const std::string& dataset_dir,
                                           const PartitionOptions& options) {
  const Stopwatch watch;
  const auto elapsed = [&watch] { return watch.Seconds(); };
  FS_RETURN_IF_ERROR(CheckOptions(options));
  const int64_t baseline = CurrentRssBytes();
  const std::string dir = std::filesystem::path(dataset_dir).lexically_normal().string();
  struct stat st;
  if (dataset_dir.empty() || ::stat(dir.c_str(), &st) != 0) {
    return NotFound("dataset " + dataset_dir + " does not exist");
  }
  if (!S_ISDIR(st.st_mode)) return InvalidArgument("dataset " + dataset_dir + " is not a directory");
  auto opened = internal::OpenSourceDataset(dir);
  if (!opened.ok()) return opened.status().WithContext("dataset " + dir);
  const SourceDataset& src = *opened;
  const int64_t n = src.num_nodes;
  if (options.parts > n) {
    return InvalidArgument("--parts " + std::to_string(options.parts) + " is more than the " +
                           std::to_string(n) + " nodes of dataset " + dir);
  }
  FS_ASSIGN_OR_RETURN(const MemoryPlan plan, PlanMemory(src, options, baseline));

  const bool in_place = options.output.empty();
  const std::string out_dir = in_place ? dir : options.output;
  FS_ASSIGN_OR_RETURN(auto writer, storage::DatasetWriter::Create(out_dir, in_place || options.overwrite));
  ThreadPool* pool = ctx.pool != nullptr ? ctx.pool : DefaultThreadPool();

  internal::AssignOptions ao;
  ao.parts = options.parts;
  ao.imbalance = options.imbalance;
  ao.seed = options.seed;
  ao.read_chunk_bytes = plan.read_chunk;
  ao.pool = pool;
  std::vector<int32_t> part;
  if (options.method == "metis") {
    FS_LOG(INFO) << "partition: METIS k-way, " << options.parts << " parts, " << n << " nodes, "
                 << src.num_edges << " edges";
    FS_ASSIGN_OR_RETURN(part, internal::MetisAssign(src, ao));
  } else {
    FS_ASSIGN_OR_RETURN(part, internal::FennelAssign(src, ao));
  }

  PartitionReport r;
  r.method = options.method;
  r.parts = options.parts;
  FS_ASSIGN_OR_RETURN(r.offsets, internal::PartitionOffsets(part, options.parts));
  r.num_edges = src.num_edges;
  r.balance = internal::Balance(r.offsets);

  FS_ASSIGN_OR_RETURN(const internal::NodeOrder order, internal::ParseNodeOrder(options.node_order));
  std::vector<int64_t> rank;
  if (order != internal::NodeOrder::kNone) {
    FS_LOG(INFO) << "partition: " << internal::NodeOrderName(order) << " node order inside the partitions";
    FS_ASSIGN_OR_RETURN(rank, internal::NodeRanks(src, part, r.offsets, order));
  }
  internal::RenumberOptions ro;
  ro.read_chunk_bytes = plan.read_chunk;
  ro.write_buffer_bytes = plan.write_buffers;
  ro.pool = pool;
  internal::RenumberResult rr;
  FS_RETURN_IF_ERROR(internal::WriteRenumbered(src, part, r.offsets, rank, ro, writer->staging_dir(), &rr));
  std::vector<int32_t>().swap(part);
  std::vector<int64_t>().swap(rank);
  r.edge_cut = rr.edge_cut;
  r.cut_fraction = r.num_edges > 0 ? static_cast<double>(r.edge_cut) / static_cast<double>(r.num_edges) : 0.0;
  r.seconds = elapsed();
  r.peak_rss_bytes = PeakRssBytes();

  storage::DatasetManifest& m = writer->manifest();
  const storage::DatasetManifest& old = src.manifest;
  m.name = old.name;
  m.num_nodes = old.num_nodes;
  m.num_edges = old.num_edges;
  m.feature_dim = old.feature_dim;
  m.feature_dtype = old.feature_dtype;
  m.num_classes = old.num_classes;
  m.id_map = old.id_map == storage::IdMap::kNone ? storage::IdMap::kInt : old.id_map;
  m.source = old.source;
  m.partitions = PartitionsJson(r, options);
  FS_RETURN_IF_ERROR(writer->Commit());
  r.seconds = elapsed();
  r.peak_rss_bytes = PeakRssBytes();
  r.output = writer->out_dir();
  return r;
}

}  // namespace foresight::graph
