// GEMM through oneDNN's sgemm (sgemm.h): each call computes one tile of c
// on one thread, the tiles spread over ctx.pool. Every element of c is
// produced by exactly one call over the full k. oneDNN's summation order
// depends on the call's shape (a one-row call takes its gemv path), so the
// tiles are a function of the product's shape and of the machine's core
// count only, never of the pool's thread count: results are identical for
// any number of threads (GemmTest checks the bits from 1 to 16).
#include <algorithm>

#include "cpu_ops.h"
#include "sgemm.h"

namespace foresight::kernels::cpu {

namespace {

// Leading dimension as BLAS wants it (>= max(1, cols)).
int64_t LeadingDim(const Tensor& t) {
  const int64_t cols = std::max<int64_t>(1, t.size(1));
  return t.size(0) > 1 ? std::max(t.stride(0), cols) : cols;
}

// Scales c by beta (k == 0 case); beta == 0 overwrites so NaNs don't survive.
void ScaleC(const ExecContext& ctx, float beta, float* c, int64_t m, int64_t n, int64_t ldc) {
  ctx.pool->ParallelFor(m, RowGrain(n), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      float* row = c + r * ldc;
      if (beta == 0.0f) {
        std::fill(row, row + n, 0.0f);
      } else {
        for (int64_t j = 0; j < n; ++j) row[j] *= beta;
      }
    }
  });
}

}  // namespace

Status Gemm(const ExecContext& ctx, const Tensor& a, bool trans_a, const Tensor& b, bool trans_b,
            float alpha, float beta, Tensor* c) {
  const int64_t m = c->size(0), n = c->size(1);
  const int64_t k = trans_a ? a.size(0) : a.size(1);
  if (m == 0 || n == 0) return Status::OK();
  float* cp = c->data<float>();
  const int64_t ldc = LeadingDim(*c);
  if (k == 0) {
    ScaleC(ctx, beta, cp, m, n, ldc);
    return Status::OK();
  }
  const float* ap = a.data<float>();
  const float* bp = b.data<float>();
  const int64_t lda = LeadingDim(a), ldb = LeadingDim(b);

  // Tiles of about 2^20 multiply-adds, at least 64 rows, so per-call overhead
  // stays small. A tile then grows (up to 512 rows) to the largest size
  // that still leaves two tiles a core of the machine (the core count, not
  // the pool's threads: see the top): every call packs its panels
  // of a and b again, so the operand a tile shares with the others (the
  // whole of op(b) when tile_n = n) is packed once a tile. At 64-row tiles
  // of the DLRM step's products (2048 x 512 x 415 and its neighbours) that
  // repacking cost 20% of the GEMMs' CPU time on 2 threads (measured with
  // OpenBLAS, which packs the same way).
  // Last, the rows and columns are shared evenly among the tiles, so no
  // tile is a thin remainder: a one-row or one-column call takes oneDNN's
  // gemv path, slower and rounded in another order.
  int64_t tile_n = n <= 512 ? n : (n > 1024 ? 512 : 256);
  int64_t tile_m = (int64_t{1} << 20) / std::max<int64_t>(1, tile_n * k);
  tile_m = std::clamp<int64_t>((tile_m + 15) / 16 * 16, 64, 1024);
  const int64_t tiles_n = (n + tile_n - 1) / tile_n;
  const int64_t min_tiles = 2 * static_cast<int64_t>(OnlineCpus());
  const int64_t want_m = std::max<int64_t>(1, (min_tiles + tiles_n - 1) / tiles_n);  // row tiles wanted
  const int64_t grown = ((m + want_m - 1) / want_m + 15) / 16 * 16;
  tile_m = std::max(tile_m, std::min<int64_t>(grown, 512));
  const int64_t tiles_m = (m + tile_m - 1) / tile_m;
  tile_m = (m + tiles_m - 1) / tiles_m;
  tile_n = (n + tiles_n - 1) / tiles_n;

  SgemmCalls calls;
  ctx.pool->ParallelFor(tiles_m * tiles_n, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t r0 = (t / tiles_n) * tile_m, c0 = (t % tiles_n) * tile_n;
      const int64_t rows = std::min(tile_m, m - r0), cols = std::min(tile_n, n - c0);
      const float* at = trans_a ? ap + r0 : ap + r0 * lda;
      const float* bt = trans_b ? bp + c0 * ldb : bp + c0;
      calls.Run(trans_a, trans_b, rows, cols, k, alpha, at, lda, bt, ldb, beta, cp + r0 * ldc + c0, ldc);
    }
  });
  return calls.status("Gemm");
}

}  // namespace foresight::kernels::cpu
