// The order of the nodes inside each partition, chosen at partition time so
// that rows a mini-batch reads together are neighbours on disk: one 4 KiB
// read (or one coalesced extent) then serves several of a batch's rows.
// The order is a relabelling only (the graph, features and labels move with
// their nodes), so training computes the same model on it. Private to the
// graph module.
//
//   none    old id order (the renumbering's default: a node's rank is its
//           place among its partition's nodes in input id order)
//   degree  in-degree descending, ties by input id: the rows sampled most
//           (R-MAT hubs) share pages, so a page read for one hot row brings
//           other hot rows
//   bfs     breadth-first over in-edges inside the partition, roots taken in
//           in-degree-descending order: a node's in-neighbours (the rows its
//           sampled neighbourhood draws from) follow it in one run, and a
//           community becomes a contiguous row range
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/thread_pool.h"
#include "source_dataset.h"

namespace foresight::graph::internal {

enum class NodeOrder { kNone, kDegree, kBfs };

// "none", "degree", "bfs"; InvalidArgument naming them otherwise.
StatusOr<NodeOrder> ParseNodeOrder(const std::string& name);
const char* NodeOrderName(NodeOrder order);

// Bytes NodeRanks holds at its peak beyond `part` and `offsets`.
int64_t NodeOrderMemory(const SourceDataset& src, NodeOrder order);

// rank[v] in [0, size of v's partition): v's position inside its
// partition. Empty for kNone (the renumbering keeps old order). bfs reads
// the CSR's neighbour lists into memory (NodeOrderMemory counts them).
StatusOr<std::vector<int64_t>> NodeRanks(const SourceDataset& src, const std::vector<int32_t>& part,
                                         const std::vector<int64_t>& offsets, NodeOrder order);

}  // namespace foresight::graph::internal
