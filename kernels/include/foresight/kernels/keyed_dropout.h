// Dropout keyed by what a row is rather than where it sits: the masks of
// a process holding part of a batch are then the whole batch's (issue 16:
// several ranks give the one-rank steps). A header of its own so the ops
// every kernel includes (ops.h) stay as they were.
#pragma once

#include <cstdint>

#include "foresight/core/context.h"
#include "foresight/core/rng.h"
#include "foresight/core/tensor.h"
#include "foresight/kernels/csr.h"

namespace foresight::kernels {

// Dropout keyed by row: row r of x [R, ...] (C elements a row) takes the
// decisions of row row_ids[r] of a virtual [*, C] matrix, i.e. element (r, c)
// keeps when ctx.rng.StreamUniform(row_ids[r] * C + c, 0) >= p (mod 2^64).
// A row's mask then follows its global identity (a node id, a sample's
// index in the global batch), not its position in this process's batch, so
// ranks holding different parts of a batch draw the one-rank masks. With
// row_ids = 0..R-1 it equals Dropout bit for bit. row_ids: i64 [R] on x's
// device.
Status DropoutRows(const ExecContext& ctx, float p, const Tensor& x, const Tensor& row_ids, Tensor* out,
                   Tensor* mask);
// DropoutRows of ReLU(x) in one pass, with the bits of Activate(kRelu)
// followed by DropoutRows: out = keep && x > 0 ? x * scale : 0. The mask
// (if any) is 1 exactly where out took x, so DropoutBackward with it is
// the gradient of both: ReLU's backward folded into the mask. No ReLU
// output is written or kept for the backward.
Status ReluDropoutRows(const ExecContext& ctx, float p, const Tensor& x, const Tensor& row_ids, Tensor* out,
                       Tensor* mask);
// GatherRows(src, ids) then DropoutRows keyed by the same ids, in one
// pass: out row r = the dropout of src row ids[r] (f16 / bf16 widened as
// GatherRows does), keyed by ids[r]; the two ops' bits. No mask: for rows
// no gradient flows to (a GNN batch's input features, gathered and dropped
// on the input pipeline's thread). src [N, F] f32 / f16 / bf16, ids i32 /
// i64 [R] in [0, N), out f32 [R, F]; CPU only (the pipeline's host rows).
Status GatherRowsDropout(const ExecContext& ctx, float p, const Tensor& src, const Tensor& ids, Tensor* out);
// Per-edge row ids for DropoutRows on a block's edge values ([E, heads]):
// keys[e] = a 64-bit hash of (src_ids[dst], src_ids[src]) of edge e, the
// global ids of its two ends (a block's first num_dst sources are its
// destinations). Parallel edges share a key. keys: i64 [E], allocated by
// the op on csr's device; src_ids: i64 [num_src] on that device.
Status DropoutEdgeKeys(const ExecContext& ctx, const Csr& csr, const Tensor& src_ids, Tensor* keys);
// The key of an edge from global node `src` into `dst` (host and device).
FS_HOST_DEVICE inline int64_t DropoutEdgeKey(int64_t dst, int64_t src) {
  return static_cast<int64_t>(RngKey::FromSeed(static_cast<uint64_t>(dst)).Fold(static_cast<uint64_t>(src)).key);
}

}  // namespace foresight::kernels
