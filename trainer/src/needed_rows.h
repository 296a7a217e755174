// Which rows each layer of layer-wise inference must compute so that the
// last layer can produce a given set of outputs: the outputs themselves,
// then, layer by layer backwards, the rows of the layer above and their
// in-neighbours. Private to the trainer.
#pragma once

#include <cstdint>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/tensor.h"
#include "foresight/kernels/csr.h"

namespace foresight::trainer::internal {

// The rows of one layer: all nodes, or a set of them. A set is one bit per
// node and a running count per 512 nodes, about 0.14 bytes a node: an id
// list and an [N] position index took 16 bytes a node (1.6 GB per layer at
// 100M nodes). The chunks' ids and each source row's position in the layer
// are derived from it.
struct LayerRows {
  bool all = true;
  std::vector<uint64_t> bits;   // node v is in the set when bit v % 64 of bits[v / 64] is
  std::vector<int64_t> before;  // nodes of the set below 512 * b, for each block b; back() = the set's size

  int64_t count(int64_t num_nodes) const { return all ? num_nodes : before.back(); }
  bool Has(int64_t v) const { return (bits[static_cast<size_t>(v >> 6)] >> (v & 63)) & 1; }
  // How many nodes of the set are below v: v's position when Has(v).
  int64_t Rank(int64_t v) const;
  // The nodes at positions [begin, end) of the set, ascending, into out.
  void Ids(int64_t begin, int64_t end, int64_t* out) const;
};

// rows[l] for l in [0, num_layers - 1): the output rows layer l must
// compute. `outputs` (i32/i64 id lists, checked against the graph) are what
// the last layer computes; an empty list means all nodes (every rows[l] is
// then `all`). A layer whose needed rows cover every node is `all`, as are
// all layers below it. The sets are built with relaxed atomic ORs of the
// same bits, so the result does not depend on the thread count. With
// `give_back_pages` (a paged topology: the CSR arrays are read-only file
// mappings) the scan walks the nodes in windows of at most kScanWindowEdges
// in-edges and gives each window's CSR pages back before the next, so the
// pages it maps stay a window's, not the whole CSR: on kernels whose page
// cache maps 2 MiB folios per touch, a 1M-node evaluation otherwise mapped
// several GB at once.
StatusOr<std::vector<LayerRows>> NeededRows(const ExecContext& ctx, const kernels::Csr& graph, int num_layers,
                                            const std::vector<Tensor>& outputs, bool give_back_pages = false);
inline constexpr int64_t kScanWindowEdges = int64_t{1} << 24;

// Bytes NeededRows holds for a graph of `num_nodes` nodes and `num_layers`
// layers at most: each kept layer's set and the two sets it builds with.
int64_t NeededRowsBytes(int64_t num_nodes, int num_layers);

}  // namespace foresight::trainer::internal
