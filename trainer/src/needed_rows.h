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

// The rows of one layer: all nodes, or the listed ones.
struct LayerRows {
  bool all = true;
  Tensor ids;   // i64 [n], ascending (when !all)
  Tensor rank;  // i64 [N]: position of node u in ids, -1 when absent (when !all)

  int64_t count(int64_t num_nodes) const { return all ? num_nodes : ids.numel(); }
};

// rows[l] for l in [0, num_layers - 1): the output rows layer l must
// compute. `outputs` (i32/i64 id lists, checked against the graph) are what
// the last layer computes; an empty list means all nodes (every rows[l] is
// then `all`). A layer whose needed rows cover every node is `all`, as are
// all layers below it. The masks are built with relaxed stores of the same
// value, so the result does not depend on the thread count.
StatusOr<std::vector<LayerRows>> NeededRows(const ExecContext& ctx, const kernels::Csr& graph, int num_layers,
                                            const std::vector<Tensor>& outputs);

}  // namespace foresight::trainer::internal
