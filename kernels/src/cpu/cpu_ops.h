// CPU implementations of the ops in foresight/kernels/ops.h and csr.h. The
// dispatchers in kernels/src/<op>.cc have already checked dtypes, shapes and
// devices; these functions trust them. Every loop runs on ctx.pool with
// chunking that depends only on the problem size, so results are bitwise
// identical for any thread count.
#pragma once

#include <cstdint>

#include "foresight/kernels/ops.h"

namespace foresight::kernels::cpu {

// Grain of elementwise loops (elements per chunk).
constexpr int64_t kElementGrain = 16384;

// Rows per chunk so a chunk touches about kElementGrain elements.
inline int64_t RowGrain(int64_t row_elems) {
  const int64_t g = kElementGrain / (row_elems > 0 ? row_elems : 1);
  return g > 0 ? g : 1;
}

#define FORESIGHT_BACKEND_OP(name, params) Status name params;
#include "../backend_ops.inc"
#undef FORESIGHT_BACKEND_OP

// Calls fn(I{}) with I = int32_t or int64_t, the element type of an index
// tensor (the dispatchers have checked it is one of the two).
template <typename Fn>
auto WithIndexType(DType t, Fn&& fn) {
  if (t == DType::kI32) return fn(int32_t{});
  return fn(int64_t{});
}

// Destination rows per chunk for a graph op touching `per_edge` floats per
// edge: about 4 * kElementGrain floats of work per chunk. Depends only on
// the shapes, never on the thread count.
inline int64_t DstGrain(int64_t num_dst, int64_t num_edges, int64_t per_edge) {
  const int64_t avg = num_dst > 0 ? num_edges / num_dst : 0;
  const int64_t g = 4 * kElementGrain / ((per_edge > 0 ? per_edge : 1) * (1 + avg));
  return g > 0 ? g : 1;
}

}  // namespace foresight::kernels::cpu
