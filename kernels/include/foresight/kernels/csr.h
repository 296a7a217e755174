// Csr: the sparse structure every graph kernel takes. Rows are destination
// nodes; row v lists v's in-neighbours (sources). For a sampled block the
// first num_dst source ids are the destination nodes themselves (the DGL/PyG
// block convention), so a layer can read its "self" features as x[0:num_dst].
#pragma once

#include <cstdint>

#include "foresight/core/context.h"
#include "foresight/core/tensor.h"

namespace foresight::kernels {

struct Csr {
  Tensor indptr;       // i64 [num_dst + 1]
  Tensor indices;      // i32 or i64 [num_edges], values in [0, num_src)
  int64_t num_src = 0;
  Tensor edge_weight;  // optional f32 [num_edges] (GCN normalisation)

  int64_t num_dst() const { return indptr.defined() ? indptr.size(0) - 1 : 0; }
  int64_t num_edges() const { return indices.defined() ? indices.size(0) : 0; }
  Device device() const { return indptr.device(); }
};

// Validates dtypes, shapes, monotone indptr and index ranges (O(E); call on
// untrusted input, not per step).
Status ValidateCsr(const Csr& csr, const char* what);

// The transpose: rows are sources, listing destinations. `edge_perm` (i64
// [E], may be null) receives, for each edge of the result, its position in
// `csr`, so per-edge values can be permuted. Edge order within a row is by
// ascending original position (deterministic). Edge weights are permuted.
// The op allocates out's tensors (indices keep csr's index dtype).
Status TransposeCsr(const ExecContext& ctx, const Csr& csr, Csr* out, Tensor* edge_perm);

}  // namespace foresight::kernels
