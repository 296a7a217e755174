// The backend harness's cases (backend_harness.h), one list per op group:
// every op of foresight/kernels/ops.h and csr.h with shapes that cross the
// kernels' boundaries (a warp's 32 lanes, the CPU's chunk grains, empty
// rows, rows of hundreds of edges), both index dtypes, and the error paths.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backend_harness.h"

namespace foresight::kernels::backend {

// Op group name -> its cases ("gemm", "rows", "elementwise", "activation",
// "dropout", "loss", "csr", "spmm", "gcn", "gat", "sample", "embedding_bag",
// "optimizer").
std::vector<std::string> GroupNames();
std::vector<Case> MakeGroup(const std::string& group);

}  // namespace foresight::kernels::backend
