// GEMM through oneDNN's sgemm (sgemm.h): each call computes one tile of c
// on one thread, the tiles spread over ctx.pool. Every element of c is
// produced by exactly one call over the full k. oneDNN's summation order
// depends on the call's shape (a one-row call takes its gemv path), so the
// tiles are a function of the product's shape and of the machine's core
// count only, never of the pool's thread count: results are identical for
// any number of threads (GemmTest checks the bits from 1 to 16).
#include <algorithm>
#include <vector>

#include "bias_rows.h"
#include "cpu_ops.h"
#include "row_sums.h"
#include "sgemm.h"

namespace foresight::kernels::cpu {

namespace {

// Leading dimension as BLAS wants it (>= max(1, cols)).
int64_t LeadingDim(const Tensor& t) {
  const int64_t cols = std::max<int64_t>(1, t.size(1));
  return t.size(0) > 1 ? std::max(t.stride(0), cols) : cols;
}

// Tiles of about 2^20 multiply-adds, at least 64 rows, so per-call overhead
// stays small. A tile then grows (up to 512 rows) to the largest size that
// still leaves two tiles a core of the machine (the core count, not the
// pool's threads: see the top): every call packs its panels of a and b
// again, so the operand a tile shares with the others (the whole of op(b)
// when tile_n = n) is packed once a tile. At 64-row tiles of the DLRM step's
// products (2048 x 512 x 415 and its neighbours) that repacking cost 20% of
// the GEMMs' CPU time on 2 threads (measured with OpenBLAS, which packs the
// same way). Last, the rows and columns are shared evenly among the tiles,
// so no tile is a thin remainder: a one-row or one-column call takes
// oneDNN's gemv path, slower and rounded in another order.
struct GemmTiles {
  int64_t tile_m, tile_n, tiles_m, tiles_n;
};

GemmTiles PlanTiles(int64_t m, int64_t n, int64_t k) {
  GemmTiles t;
  t.tile_n = n <= 512 ? n : (n > 1024 ? 512 : 256);
  int64_t tile_m = (int64_t{1} << 20) / std::max<int64_t>(1, t.tile_n * k);
  tile_m = std::clamp<int64_t>((tile_m + 15) / 16 * 16, 64, 1024);
  t.tiles_n = (n + t.tile_n - 1) / t.tile_n;
  const int64_t min_tiles = 2 * static_cast<int64_t>(OnlineCpus());
  const int64_t want_m = std::max<int64_t>(1, (min_tiles + t.tiles_n - 1) / t.tiles_n);  // row tiles wanted
  const int64_t grown = ((m + want_m - 1) / want_m + 15) / 16 * 16;
  tile_m = std::max(tile_m, std::min<int64_t>(grown, 512));
  t.tiles_m = (m + tile_m - 1) / tile_m;
  t.tile_m = (m + t.tiles_m - 1) / t.tiles_m;
  t.tile_n = (n + t.tiles_n - 1) / t.tiles_n;
  return t;
}

// fn(r0, c0, rows, cols) once per tile of c, the tiles spread over the pool.
template <typename Fn>
void ForEachTile(const ExecContext& ctx, const GemmTiles& t, int64_t m, int64_t n, Fn&& fn) {
  ctx.pool->ParallelFor(t.tiles_m * t.tiles_n, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t i = t0; i < t1; ++i) {
      const int64_t r0 = (i / t.tiles_n) * t.tile_m, c0 = (i % t.tiles_n) * t.tile_n;
      fn(r0, c0, std::min(t.tile_m, m - r0), std::min(t.tile_n, n - c0));
    }
  });
}

// c = alpha op(a) op(b) + beta c, tile by tile over the pool, each tile
// then handed to epilogue(r0, c0, rows, cols) on the thread that computed
// it (while it is still in that core's cache). With k == 0, c is scaled by
// beta (beta == 0 overwrites, NaNs included) and the epilogue sees row
// blocks of whole rows.
template <typename Epilogue>
Status TiledGemm(const ExecContext& ctx, const char* op, const Tensor& a, bool trans_a, const Tensor& b,
                 bool trans_b, float alpha, float beta, Tensor* c, Epilogue&& epilogue) {
  const int64_t m = c->size(0), n = c->size(1);
  const int64_t k = trans_a ? a.size(0) : a.size(1);
  if (m == 0 || n == 0) return Status::OK();
  float* cp = c->data<float>();
  const int64_t ldc = LeadingDim(*c);
  if (k == 0) {
    ctx.pool->ParallelFor(m, RowGrain(n), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        float* row = cp + r * ldc;
        if (beta == 0.0f) {
          std::fill(row, row + n, 0.0f);
        } else {
          for (int64_t j = 0; j < n; ++j) row[j] *= beta;
        }
      }
      epilogue(r0, 0, r1 - r0, n);
    });
    return Status::OK();
  }
  const float* ap = a.data<float>();
  const float* bp = b.data<float>();
  const int64_t lda = LeadingDim(a), ldb = LeadingDim(b);
  SgemmCalls calls;
  ForEachTile(ctx, PlanTiles(m, n, k), m, n, [&](int64_t r0, int64_t c0, int64_t rows, int64_t cols) {
    const float* at = trans_a ? ap + r0 : ap + r0 * lda;
    const float* bt = trans_b ? bp + c0 * ldb : bp + c0;
    calls.Run(trans_a, trans_b, rows, cols, k, alpha, at, lda, bt, ldb, beta, cp + r0 * ldc + c0, ldc);
    epilogue(r0, c0, rows, cols);
  });
  return calls.status(op);
}

}  // namespace

Status Gemm(const ExecContext& ctx, const Tensor& a, bool trans_a, const Tensor& b, bool trans_b,
            float alpha, float beta, Tensor* c) {
  return TiledGemm(ctx, "Gemm", a, trans_a, b, trans_b, alpha, beta, c, [](int64_t, int64_t, int64_t, int64_t) {});
}

// Gemm's tiles, each followed by its bias (and ReLU) while the tile is still
// in this core's cache: the separate AddBias / AddBiasRelu pass read and
// wrote all of y again from L3 (2048 x 512 floats for the DLRM step's widest
// layers), and took a pool round of its own. Each element is the same
// fl(product + bias) as that pass computes, so the bits are the same.
Status GemmBias(const ExecContext& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, bool relu, Tensor* y) {
  float* yp = y->data<float>();
  const int64_t ldy = LeadingDim(*y);
  const float* pb = bias.data<float>();
  return TiledGemm(ctx, "GemmBias", x, false, w, false, 1.0f, 0.0f, y,
                   [&](int64_t r0, int64_t c0, int64_t rows, int64_t cols) {
                     for (int64_t r = r0; r < r0 + rows; ++r) {
                       float* row = yp + r * ldy + c0;
                       if (relu) {
                         BiasReluRow(row, pb + c0, row, cols);
                       } else {
                         BiasRow(row, pb + c0, row, cols);
                       }
                     }
                   });
}

// The ReLU backward of the layer below on each tile of dY W^T, while the tile
// is in this core's cache: the separate ReluBackwardSumRows pass read dX and
// y again and wrote grad_z, all from L3 (2048 x 512 floats at the DLRM
// step's widest layers), in a pool round of its own. The select is exact,
// so grad_z is that pass's bits. The bias gradient keeps SumRows' order
// (chunks of RowGrain(f) rows, each summed from 0.0f in row order, then the
// chunks' partials in chunk order): when every row tile starts on a chunk
// boundary (the DLRM step's shapes: 512-row tiles, 32- and 64-row chunks),
// each tile adds its rows into its chunks' partials in the epilogue; when
// one does not, the same chunk sums run as a second pass over grad_z. The
// bits are the same either way (GemmReluBackwardTest checks both).
Status GemmReluBackward(const ExecContext& ctx, const Tensor& grad_y, const Tensor& w, const Tensor& y,
                        Tensor* grad_z, Tensor* grad_bias) {
  const int64_t m = grad_z->size(0), f = grad_z->size(1), k = grad_y.size(1);
  float* pz = grad_z->data<float>();
  const float* py = y.data<float>();
  const int64_t grain = RowGrain(f);
  // k == 0 hands the epilogue blocks of RowGrain(f) rows: chunk-aligned too.
  bool sum_in_tiles = grad_bias != nullptr && m > 0 && f > 0;
  if (sum_in_tiles && k > 0) {
    const GemmTiles tiles = PlanTiles(m, f, k);
    sum_in_tiles = tiles.tiles_m == 1 || tiles.tile_m % grain == 0;
  }
  const int64_t chunks = ThreadPool::NumChunks(m, grain);
  std::vector<float> partial(sum_in_tiles ? static_cast<size_t>(chunks * f) : 0, 0.0f);
  FS_RETURN_IF_ERROR(TiledGemm(ctx, "GemmReluBackward", grad_y, false, w, true, 1.0f, 0.0f, grad_z,
                               [&](int64_t r0, int64_t c0, int64_t rows, int64_t cols) {
                                 for (int64_t r = r0; r < r0 + rows; ++r) {
                                   float* row = pz + r * f + c0;
                                   ReluSelect(py + r * f + c0, row, row, 0, cols);
                                   if (!sum_in_tiles) continue;
                                   float* acc = partial.data() + (r / grain) * f + c0;
                                   for (int64_t j = 0; j < cols; ++j) acc[j] += row[j];
                                 }
                               }));
  if (grad_bias == nullptr) return Status::OK();
  float* out = grad_bias->data<float>();
  if (!sum_in_tiles) {
    SumRowsInChunks(ctx, m, f, out, [&](int64_t r) { return pz + r * f; });
    return Status::OK();
  }
  std::fill(out, out + f, 0.0f);
  for (int64_t c = 0; c < chunks; ++c) {
    const float* acc = partial.data() + c * f;
    for (int64_t j = 0; j < f; ++j) out[j] += acc[j];
  }
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
