// METIS k-way on the symmetrised simple graph. METIS wants an undirected
// graph without self loops or repeated edges: every CSR edge u -> v (u in
// row v) becomes u-v in both adjacency lists, each list is sorted and its
// duplicates dropped (over the thread pool, per node), then the lists are
// packed. Two sequential passes over the CSR (count, fill) read it in chunks.
//
// Memory (idx_t = 4 bytes in Debian's libmetis): ours is xadj (N + 1) and
// adjncy (at most 2E) as idx_t, the fill cursors (8 bytes a node) and
// part[] (4 a node); METIS then allocates far more than its input: edge
// weights, every coarsening level's graph, matching, and the refinement's
// neighbour pools. Measured on the 1M-node / 20M-edge R-MAT graph (P = 16,
// 36.0M adjacency entries after deduplication): 185 MB before the METIS
// call, 2.25 GB peak RSS, i.e. about 56 bytes per bound entry (2E) plus our
// arrays. The estimate is 60 bytes per bound entry plus 64 bytes a node.
#include <metis.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "foresight/core/logging.h"
#include "foresight/core/progress.h"
#include "partitioners.h"

namespace foresight::graph::internal {
namespace {

static_assert(sizeof(idx_t) == 4 || sizeof(idx_t) == 8, "unexpected METIS idx_t width");

constexpr int64_t kGrain = int64_t(1) << 14;

template <typename T>
Status BuildSymmetric(const SourceDataset& src, const AssignOptions& o, std::vector<idx_t>* xadj_out,
                      std::vector<idx_t>* adjncy_out) {
  const int64_t n = src.num_nodes;
  // Pass 1: degree of every node in the symmetrised multigraph.
  std::vector<int64_t> cursor(static_cast<size_t>(n) + 1, 0);
  FS_RETURN_IF_ERROR(ForEachRow<T>(src, o.read_chunk_bytes, [&](int64_t v, const T* first, const T* last) {
    for (const T* u = first; u != last; ++u) {
      if (*u == v) continue;
      ++cursor[v + 1];
      ++cursor[*u + 1];
    }
    return Status::OK();
  }));
  for (int64_t v = 0; v < n; ++v) cursor[v + 1] += cursor[v];
  const int64_t total = cursor[n];
  if (total > std::numeric_limits<idx_t>::max()) {
    return Unimplemented("metis: the symmetrised graph has " + std::to_string(total) +
                         " adjacency entries, more than METIS's " + std::to_string(sizeof(idx_t) * 8) +
                         "-bit idx_t holds; use --method stream");
  }
  std::vector<idx_t> adjncy(static_cast<size_t>(total));
  // Pass 2: fill; cursor[v] walks row v's slots.
  FS_RETURN_IF_ERROR(ForEachRow<T>(src, o.read_chunk_bytes, [&](int64_t v, const T* first, const T* last) {
    for (const T* u = first; u != last; ++u) {
      if (*u == v) continue;
      adjncy[static_cast<size_t>(cursor[v]++)] = static_cast<idx_t>(*u);
      adjncy[static_cast<size_t>(cursor[*u]++)] = static_cast<idx_t>(v);
    }
    return Status::OK();
  }));
  // Now cursor[v] is the end of row v, and the start of row v is cursor[v-1]
  // (0 for v = 0). Sort and deduplicate every row in place; keep its length.
  std::vector<idx_t> length(static_cast<size_t>(n));
  o.pool->ParallelFor(n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t v = b; v < e; ++v) {
      idx_t* first = adjncy.data() + (v == 0 ? 0 : cursor[v - 1]);
      idx_t* last = adjncy.data() + cursor[v];
      std::sort(first, last);
      length[static_cast<size_t>(v)] = static_cast<idx_t>(std::unique(first, last) - first);
    }
  });
  // Pack left to right (a row never moves right).
  std::vector<idx_t>& xadj = *xadj_out;
  xadj.assign(static_cast<size_t>(n) + 1, 0);
  int64_t out = 0;
  for (int64_t v = 0; v < n; ++v) {
    const int64_t from = v == 0 ? 0 : cursor[v - 1];
    const int64_t len = length[static_cast<size_t>(v)];
    if (from != out && len > 0) {
      std::memmove(adjncy.data() + out, adjncy.data() + from, static_cast<size_t>(len) * sizeof(idx_t));
    }
    out += len;
    xadj[static_cast<size_t>(v) + 1] = static_cast<idx_t>(out);
  }
  adjncy.resize(static_cast<size_t>(out));
  adjncy.shrink_to_fit();
  *adjncy_out = std::move(adjncy);
  return Status::OK();
}

}  // namespace

int64_t MetisMemoryEstimate(int64_t n, int64_t e) {
  // Per bound adjacency entry: measured ~56 bytes with 4-byte idx_t.
  const double per_entry = 15.0 * sizeof(idx_t);
  return static_cast<int64_t>(per_entry * 2.0 * static_cast<double>(e)) + 64 * n;
}

StatusOr<std::vector<int32_t>> MetisAssign(const SourceDataset& src, const AssignOptions& o) {
  const int64_t n = src.num_nodes;
  std::vector<int32_t> part(static_cast<size_t>(n), 0);
  if (o.parts == 1 || n == 0) return part;
  if (n > std::numeric_limits<idx_t>::max()) {
    return Unimplemented("metis: " + std::to_string(n) + " nodes exceed METIS's idx_t; use --method stream");
  }
  std::vector<idx_t> xadj, adjncy;
  if (src.indices_i64()) {
    FS_RETURN_IF_ERROR(BuildSymmetric<int64_t>(src, o, &xadj, &adjncy));
  } else {
    FS_RETURN_IF_ERROR(BuildSymmetric<int32_t>(src, o, &xadj, &adjncy));
  }
  FS_LOG(INFO) << "metis: symmetrised graph " << n << " nodes, " << adjncy.size()
               << " adjacency entries; RSS " << CurrentRssBytes() / 1000000 << " MB";
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_CUT;
  options[METIS_OPTION_NUMBERING] = 0;
  // METIS seeds its own RNG with an idx_t; fold the 64-bit seed into 31 bits.
  options[METIS_OPTION_SEED] = static_cast<idx_t>((o.seed ^ (o.seed >> 31) ^ (o.seed >> 62)) & 0x7fffffff);
  // Allowed imbalance in thousandths: (1 + ufactor / 1000) * N / P.
  options[METIS_OPTION_UFACTOR] = static_cast<idx_t>(std::max(1.0, std::round(o.imbalance * 1000.0)));
  idx_t nvtxs = static_cast<idx_t>(n), ncon = 1, nparts = o.parts, objval = 0;
  std::vector<idx_t> where(static_cast<size_t>(n), 0);
  const int rc = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr, nullptr,
                                     &nparts, nullptr, nullptr, options, &objval, where.data());
  // objval counts cut pairs of the symmetrised graph, a different number
  // from the report's edge_cut (the dataset's cut edges); print only the one.
  FS_LOG(INFO) << "metis: partitioned; peak RSS " << PeakRssBytes() / 1000000 << " MB";
  if (rc == METIS_ERROR_MEMORY) {
    return ResourceExhausted("metis: METIS_PartGraphKway ran out of memory on " + std::to_string(n) +
                             " nodes / " + std::to_string(adjncy.size()) +
                             " adjacency entries; use --method stream");
  }
  if (rc != METIS_OK) {
    return Internal("metis: METIS_PartGraphKway failed (code " + std::to_string(rc) + ") on " +
                    std::to_string(n) + " nodes, " + std::to_string(o.parts) + " parts");
  }
  for (int64_t v = 0; v < n; ++v) {
    const idx_t p = where[static_cast<size_t>(v)];
    if (p < 0 || p >= nparts) {
      return Internal("metis: node " + std::to_string(v) + " got partition " + std::to_string(p));
    }
    part[static_cast<size_t>(v)] = static_cast<int32_t>(p);
  }
  return part;
}

}  // namespace foresight::graph::internal
