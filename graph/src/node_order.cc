#include "node_order.h"

#include <algorithm>
#include <numeric>

namespace foresight::graph::internal {
namespace {

// Every node, grouped by partition, in-degree descending inside one, ties
// by id.
std::vector<int64_t> ByPartitionThenDegree(const SourceDataset& src, const std::vector<int32_t>& part) {
  const int64_t* indptr = src.indptr.data();
  std::vector<int64_t> nodes(static_cast<size_t>(src.num_nodes));
  std::iota(nodes.begin(), nodes.end(), int64_t{0});
  std::sort(nodes.begin(), nodes.end(), [&](int64_t a, int64_t b) {
    if (part[a] != part[b]) return part[a] < part[b];
    const int64_t da = indptr[a + 1] - indptr[a], db = indptr[b + 1] - indptr[b];
    if (da != db) return da > db;
    return a < b;
  });
  return nodes;
}

template <typename T>
Status BfsRanks(const SourceDataset& src, const std::vector<int32_t>& part, std::vector<int64_t>* rank) {
  const int64_t n = src.num_nodes;
  std::vector<T> nbr(static_cast<size_t>(src.num_edges));
  if (src.num_edges > 0) FS_RETURN_IF_ERROR(src.indices.ReadRows(0, src.num_edges, nbr.data()));
  const int64_t* indptr = src.indptr.data();
  const std::vector<int64_t> roots = ByPartitionThenDegree(src, part);
  constexpr int64_t kUnvisited = -1;
  rank->assign(static_cast<size_t>(n), kUnvisited);
  std::vector<int64_t> queue;
  queue.reserve(static_cast<size_t>(n));
  int32_t current = -1;
  int64_t next = 0;  // the next rank inside `current`
  for (int64_t root : roots) {
    if ((*rank)[root] != kUnvisited) continue;
    if (part[root] != current) {
      current = part[root];
      next = 0;
    }
    // Ranks are given when a node is queued, so the queue is the order.
    queue.clear();
    queue.push_back(root);
    (*rank)[root] = next++;
    for (size_t head = 0; head < queue.size(); ++head) {
      const int64_t u = queue[head];
      for (int64_t k = indptr[u]; k < indptr[u + 1]; ++k) {
        const int64_t w = static_cast<int64_t>(nbr[static_cast<size_t>(k)]);
        if (w < 0 || w >= n) {
          return DataLoss(src.indices.path() + ": position " + std::to_string(k) + ": node id " +
                          std::to_string(w) + " is not in [0, " + std::to_string(n) + ")");
        }
        if (part[w] != current || (*rank)[w] != kUnvisited) continue;
        (*rank)[w] = next++;
        queue.push_back(w);
      }
    }
  }
  return Status::OK();
}

}  // namespace

StatusOr<NodeOrder> ParseNodeOrder(const std::string& name) {
  if (name == "none") return NodeOrder::kNone;
  if (name == "degree") return NodeOrder::kDegree;
  if (name == "bfs") return NodeOrder::kBfs;
  return InvalidArgument("--node-order must be none, degree or bfs, got \"" + name + "\"");
}

const char* NodeOrderName(NodeOrder order) {
  switch (order) {
    case NodeOrder::kNone: return "none";
    case NodeOrder::kDegree: return "degree";
    case NodeOrder::kBfs: return "bfs";
  }
  return "?";
}

int64_t NodeOrderMemory(const SourceDataset& src, NodeOrder order) {
  const int64_t n = src.num_nodes;
  switch (order) {
    case NodeOrder::kNone: return 0;
    case NodeOrder::kDegree: return 16 * n;  // the sorted nodes and the ranks
    case NodeOrder::kBfs:  // + the neighbour lists and the queue
      return 24 * n + src.num_edges * (src.indices_i64() ? 8 : 4);
  }
  return 0;
}

StatusOr<std::vector<int64_t>> NodeRanks(const SourceDataset& src, const std::vector<int32_t>& part,
                                         const std::vector<int64_t>& offsets, NodeOrder order) {
  std::vector<int64_t> rank;
  if (order == NodeOrder::kNone) return rank;
  if (order == NodeOrder::kDegree) {
    const std::vector<int64_t> nodes = ByPartitionThenDegree(src, part);
    rank.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      rank[static_cast<size_t>(nodes[i])] = static_cast<int64_t>(i) - offsets[part[nodes[i]]];
    }
    return rank;
  }
  if (src.indices_i64()) {
    FS_RETURN_IF_ERROR(BfsRanks<int64_t>(src, part, &rank));
  } else {
    FS_RETURN_IF_ERROR(BfsRanks<int32_t>(src, part, &rank));
  }
  return rank;
}

}  // namespace foresight::graph::internal
