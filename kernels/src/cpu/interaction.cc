// DLRM's feature interaction on the CPU, one sample per loop iteration (the
// samples are independent, so any chunking gives the same bits). The dot
// interaction has AVX2 loops and, where the CPU has it, AVX-512 ones of the
// same operations in the same order (interaction_paths.h): the same bits.
#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu_ops.h"
#include "interaction_paths.h"
#include "philox_avx512.h"  // HaveAvx512, FS_AVX512

namespace foresight::kernels::cpu {

namespace {

// Row k of sample b's stacked vectors: z_0 = x[b], z_k = table k-1 of emb[b].
inline const float* Z(const float* xb, const float* eb, int64_t dim, int64_t k) {
  return k == 0 ? xb : eb + (k - 1) * dim;
}


// Eight f32 lanes (GCC/Clang vector extension): what one AVX register holds.
typedef float F8 __attribute__((vector_size(32)));
// The transposed stack's row width when the sample has at most this many
// vectors: the dots of two z_i live in 2 x 4 registers across the whole sum.
constexpr int64_t kLanes = 32;

inline F8 Load8(const float* p) {
  F8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// The pairs of z_i and z_{i+1} (when `two`) with every earlier z_j, from the
// transposed stack t (t[c * kLanes + j] = z_j[c]): lane j of each sum adds
// z_i[c] * z_j[c] for c ascending, from 0.0f, as the scalar dot does; lanes
// past i are discarded. Only the R registers of 8 lanes that hold pairs
// are summed (R = ceil((i + two) / 8)): the triangle of pairs needs 2.2
// registers a row on average at 26 tables, not 4. Writes i (and i + 1)
// pairs at `pairs`.
template <int R>
inline void DotPairsOfTwo(const float* t, const float* zi, const float* zi2, bool two, int64_t i, int64_t e,
                          float* pairs) {
  F8 a[R] = {}, b[R] = {};
  for (int64_t c = 0; c < e; ++c) {
    const float* row = t + c * kLanes;
    const float x = zi[c], y = zi2[c];
    for (int r = 0; r < R; ++r) {
      const F8 v = Load8(row + 8 * r);
      a[r] += x * v;
      b[r] += y * v;
    }
  }
  float out[8 * R];
  std::memcpy(out, a, sizeof(a));
  std::memcpy(pairs, out, static_cast<size_t>(i) * sizeof(float));
  if (!two) return;
  std::memcpy(out, b, sizeof(b));
  std::memcpy(pairs + i, out, static_cast<size_t>(i + 1) * sizeof(float));
}

#if defined(FS_HAVE_AVX512_PHILOX)
// See philox_avx512.h: GCC 12 reports the AVX-512 intrinsics' unused merge
// operand as uninitialised under a target attribute.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Transposes 16 rows of 16 floats in registers (r[i] holds row i; after,
// r[j] holds column j).
FS_AVX512 inline void Transpose16x16(__m512* r) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int h = 0; h < 16; h += 8) {
    for (int i = 0; i < 4; ++i) {
      t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xDD);
    }
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD);
  }
}

// The sample's stack transposed into the 32-lane layout,
// t[c * kLanes + k] = z_k[c], in 16 x 16 blocks (e a multiple of 16, at
// most kLanes vectors): the scalar loop's column-wise stores took as long
// as the dots themselves. Lanes n.. get copies of z_0 (never read as
// pairs). Data movement only: the same values.
FS_AVX512 void TransposeStack(const float* xb, const float* eb, int64_t e, int64_t n, float* t) {
  for (int64_t k0 = 0; k0 < kLanes; k0 += 16) {
    const float* z[16];
    for (int64_t r = 0; r < 16; ++r) z[r] = Z(xb, eb, e, k0 + r < n ? k0 + r : 0);
    for (int64_t c0 = 0; c0 < e; c0 += 16) {
      __m512 v[16];
      for (int r = 0; r < 16; ++r) v[r] = _mm512_loadu_ps(z[r] + c0);
      Transpose16x16(v);
      for (int r = 0; r < 16; ++r) _mm512_storeu_ps(t + (c0 + r) * kLanes + k0, v[r]);
    }
  }
}

#endif

#if defined(FS_HAVE_AVX512_PHILOX)
// The forward's pairs of `rows` (1 to 4) consecutive z_i, z_{i+1}, .. with
// every earlier z_j, with AVX-512: lane j of row r's R 16-lane registers
// adds z_{i+r}[c] * z_j[c] for c ascending from 0.0f, as DotPairsOfTwo
// does (the same bits); four rows a pass keep 4R chains of adds in flight.
// Writes i, i + 1, .. pairs one row after the other at `pairs`.
template <int R>
FS_AVX512 void DotPairsAvx512(const float* t, const float* const* z, int rows, int64_t i, int64_t e,
                              float* pairs) {
  __m512 acc[4][R];
  for (int r = 0; r < 4; ++r) {
    for (int q = 0; q < R; ++q) acc[r][q] = _mm512_setzero_ps();
  }
  const float* z0 = z[0];
  const float* z1 = z[rows > 1 ? 1 : 0];
  const float* z2 = z[rows > 2 ? 2 : 0];
  const float* z3 = z[rows > 3 ? 3 : 0];
  for (int64_t c = 0; c < e; ++c) {
    const float* row = t + c * kLanes;
    const __m512 x0 = _mm512_set1_ps(z0[c]), x1 = _mm512_set1_ps(z1[c]);
    const __m512 x2 = _mm512_set1_ps(z2[c]), x3 = _mm512_set1_ps(z3[c]);
    for (int q = 0; q < R; ++q) {
      const __m512 v = _mm512_loadu_ps(row + 16 * q);
      acc[0][q] = _mm512_add_ps(acc[0][q], _mm512_mul_ps(x0, v));
      acc[1][q] = _mm512_add_ps(acc[1][q], _mm512_mul_ps(x1, v));
      acc[2][q] = _mm512_add_ps(acc[2][q], _mm512_mul_ps(x2, v));
      acc[3][q] = _mm512_add_ps(acc[3][q], _mm512_mul_ps(x3, v));
    }
  }
  float out[16 * R];
  for (int r = 0; r < rows; ++r) {
    for (int q = 0; q < R; ++q) _mm512_storeu_ps(out + 16 * q, acc[r][q]);
    std::memcpy(pairs, out, static_cast<size_t>(i + r) * sizeof(float));
    pairs += i + r;
  }
}
#endif

#if defined(FS_HAVE_AVX512_PHILOX)
// The backward's sums for one z_k over its first 64 elements with AVX-512:
// four 16-lane registers hold d z_k[0..63] over the j loop, the shape of
// the AVX2 loop's 32-element block at twice the width (each element still
// adds fl(g * z_j[c]) in ascending j, from the value it starts with: the
// same bits). s0..s3 start from `from` (z_0: the gradient passed through)
// or 0.0f.
FS_AVX512 void DotBackward64(const float* xb, const float* eb, int64_t e, int64_t num_tables, int64_t k,
                             const float* gp, const float* from, float* gk) {
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  if (from != nullptr) {
    s0 = _mm512_loadu_ps(from), s1 = _mm512_loadu_ps(from + 16);
    s2 = _mm512_loadu_ps(from + 32), s3 = _mm512_loadu_ps(from + 48);
  }
  for (int64_t j = 0; j <= num_tables; ++j) {
    if (j == k) continue;
    const __m512 g = _mm512_set1_ps(k > j ? gp[k * (k - 1) / 2 + j] : gp[j * (j - 1) / 2 + k]);
    const float* zj = Z(xb, eb, e, j);
    s0 = _mm512_add_ps(s0, _mm512_mul_ps(g, _mm512_loadu_ps(zj)));
    s1 = _mm512_add_ps(s1, _mm512_mul_ps(g, _mm512_loadu_ps(zj + 16)));
    s2 = _mm512_add_ps(s2, _mm512_mul_ps(g, _mm512_loadu_ps(zj + 32)));
    s3 = _mm512_add_ps(s3, _mm512_mul_ps(g, _mm512_loadu_ps(zj + 48)));
  }
  _mm512_storeu_ps(gk, s0), _mm512_storeu_ps(gk + 16, s1);
  _mm512_storeu_ps(gk + 32, s2), _mm512_storeu_ps(gk + 48, s3);
}
#pragma GCC diagnostic pop
#endif

}  // namespace

Status FeatureInteraction(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                          const Tensor& emb, Tensor* out) {
#if defined(FS_HAVE_AVX512_PHILOX)
  return FeatureInteractionWith(HaveAvx512(), ctx, kind, num_tables, x, emb, out);
#else
  return FeatureInteractionWith(false, ctx, kind, num_tables, x, emb, out);
#endif
}

Status FeatureInteractionBackward(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                                  const Tensor& emb, const Tensor& grad_out, Tensor* grad_x, Tensor* grad_emb) {
#if defined(FS_HAVE_AVX512_PHILOX)
  return FeatureInteractionBackwardWith(HaveAvx512(), ctx, kind, num_tables, x, emb, grad_out, grad_x, grad_emb);
#else
  return FeatureInteractionBackwardWith(false, ctx, kind, num_tables, x, emb, grad_out, grad_x, grad_emb);
#endif
}

Status FeatureInteractionWith(bool avx512, const ExecContext& ctx, Interaction kind, int64_t num_tables,
                              const Tensor& x, const Tensor& emb, Tensor* out) {
  const int64_t batch = x.size(0), d = x.size(1), ew = emb.size(1), e = ew / num_tables;
  const int64_t width = out->size(1);
  const float* px = x.data<float>();
  const float* pe = emb.data<float>();
  float* po = out->data<float>();
  const int64_t n = num_tables + 1;  // z_0 = x, z_1..z_T the tables
#if !defined(FS_HAVE_AVX512_PHILOX)
  (void)avx512;
#endif
  ctx.pool->ParallelFor(batch, RowGrain(width + ew), [&](int64_t b0, int64_t b1) {
    thread_local std::vector<float> zt, acc;
    // Rows of kLanes when the stack fits (lanes past n hold whatever an
    // earlier call left; their sums are discarded), else n.
    const int64_t stride = n <= kLanes ? kLanes : n;
    if (kind == Interaction::kDot) {
      if (zt.size() < static_cast<size_t>(e * stride)) zt.resize(static_cast<size_t>(e * stride));
      if (acc.size() < static_cast<size_t>(n)) acc.resize(static_cast<size_t>(n));
    }
    for (int64_t b = b0; b < b1; ++b) {
      const float* xb = px + b * d;
      const float* eb = pe + b * ew;
      float* ob = po + b * width;
      std::memcpy(ob, xb, static_cast<size_t>(d) * sizeof(float));
      if (kind == Interaction::kCat) {
        std::memcpy(ob + d, eb, static_cast<size_t>(ew) * sizeof(float));
        continue;
      }
      // Each pair is a dot summed from 0.0f in ascending c, one rounded
      // product added at a time (ISO C++ builds do not contract a * b + s
      // into an FMA). Summed one dot at a time that is a chain of e
      // dependent adds per pair, which bounded the step; with the sample's
      // vectors transposed (zt[c * stride + j] = z_j[c]) the dots of one z_i
      // run side by side, lane j summing z_i[c] * z_j[c] in the same order:
      // the same bits, vectorised across j.
      float* __restrict t = zt.data();
#if defined(FS_HAVE_AVX512_PHILOX)
      if (avx512 && stride == kLanes && e % 16 == 0) {
        TransposeStack(xb, eb, e, n, t);
      } else {
#endif
        for (int64_t k = 0; k < n; ++k) {
          const float* zk = Z(xb, eb, e, k);
          for (int64_t c = 0; c < e; ++c) t[c * stride + k] = zk[c];
        }
#if defined(FS_HAVE_AVX512_PHILOX)
      }
#endif
      float* pairs = ob + d;
#if defined(FS_HAVE_AVX512_PHILOX)
      if (avx512 && stride == kLanes) {
        for (int64_t i = 1; i <= num_tables; i += 4) {
          const int rows = static_cast<int>(std::min<int64_t>(4, num_tables + 1 - i));
          const float* z[4];
          for (int r = 0; r < rows; ++r) z[r] = Z(xb, eb, e, i + r);
          if (i + rows - 1 <= 16) {  // lanes 0 .. i + rows - 2 hold pairs
            DotPairsAvx512<1>(t, z, rows, i, e, pairs);
          } else {
            DotPairsAvx512<2>(t, z, rows, i, e, pairs);
          }
          pairs += rows * i + rows * (rows - 1) / 2;
        }
        continue;
      }
#endif
      if (stride == kLanes) {
        // Two z_i a pass, their sums in registers (a chain of e adds per
        // lane, eight independent chains of eight lanes in flight).
        for (int64_t i = 1; i <= num_tables; i += 2) {
          const bool two = i + 1 <= num_tables;
          const float* zi = Z(xb, eb, e, i);
          const float* zi2 = two ? Z(xb, eb, e, i + 1) : zi;
          switch ((i + (two ? 1 : 0) + 7) / 8) {  // registers of 8 lanes that hold pairs
            case 1: DotPairsOfTwo<1>(t, zi, zi2, two, i, e, pairs); break;
            case 2: DotPairsOfTwo<2>(t, zi, zi2, two, i, e, pairs); break;
            case 3: DotPairsOfTwo<3>(t, zi, zi2, two, i, e, pairs); break;
            default: DotPairsOfTwo<4>(t, zi, zi2, two, i, e, pairs); break;
          }
          pairs += two ? 2 * i + 1 : i;
        }
        continue;
      }
      float* __restrict a = acc.data();
      for (int64_t i = 1; i <= num_tables; ++i) {
        const float* zi = Z(xb, eb, e, i);
        std::fill(a, a + i, 0.0f);
        for (int64_t c = 0; c < e; ++c) {
          const float zc = zi[c];
          const float* __restrict row = t + c * stride;
          for (int64_t j = 0; j < i; ++j) a[j] += zc * row[j];
        }
        std::memcpy(pairs, a, static_cast<size_t>(i) * sizeof(float));
        pairs += i;
      }
    }
  });
  return Status::OK();
}

Status FeatureInteractionBackwardWith(bool avx512, const ExecContext& ctx, Interaction kind, int64_t num_tables,
                                      const Tensor& x, const Tensor& emb, const Tensor& grad_out, Tensor* grad_x,
                                      Tensor* grad_emb) {
  const int64_t batch = x.size(0), d = x.size(1), ew = emb.size(1), e = ew / num_tables;
  const int64_t width = grad_out.size(1);
  const float* px = x.data<float>();
  const float* pe = emb.data<float>();
  const float* pg = grad_out.data<float>();
  float* pgx = grad_x->data<float>();
  float* pge = grad_emb->data<float>();
#if !defined(FS_HAVE_AVX512_PHILOX)
  (void)avx512;
#endif
  ctx.pool->ParallelFor(batch, RowGrain(width + ew), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float* xb = px + b * d;
      const float* eb = pe + b * ew;
      const float* gb = pg + b * width;
      float* gxb = pgx + b * d;
      float* geb = pge + b * ew;
      std::memcpy(gxb, gb, static_cast<size_t>(d) * sizeof(float));
      if (kind == Interaction::kCat) {
        std::memcpy(geb, gb + d, static_cast<size_t>(ew) * sizeof(float));
        continue;
      }
      const float* gp = gb + d;  // pair (i, j), i > j, at i(i-1)/2 + j
      const int64_t blocked = e / 32 * 32;  // elements summed in registers
      for (int64_t k = 0; k <= num_tables; ++k) {
        float* gk = k == 0 ? gxb : geb + (k - 1) * e;
#if defined(FS_HAVE_AVX512_PHILOX)
        if (avx512 && e == 64) {  // DLRM's usual width: one 64-element block
          DotBackward64(xb, eb, e, num_tables, k, gp, k == 0 ? gb : nullptr, gk);
          continue;
        }
#endif
        // z_0's sums start from the gradient passed through (copied above),
        // the tables' from 0.0f: in registers, so only the tail past the
        // 32-element blocks is zeroed in memory.
        if (k > 0) std::fill(gk + blocked, gk + e, 0.0f);
        auto coef = [&](int64_t j) { return k > j ? gp[k * (k - 1) / 2 + j] : gp[j * (j - 1) / 2 + k]; };
        // d out(i,j) / d z_k: z_j when k = i, z_i when k = j; j ascending.
        // Blocks of 32 elements keep their sums in registers over the j
        // loop (each element still adds its terms in ascending j, from the
        // value it starts with: the same bits as summing in memory).
        int64_t c0 = 0;
        for (; c0 + 32 <= e; c0 += 32) {
          F8 s0 = {}, s1 = {}, s2 = {}, s3 = {};
          if (k == 0) {
            s0 = Load8(gk + c0), s1 = Load8(gk + c0 + 8), s2 = Load8(gk + c0 + 16), s3 = Load8(gk + c0 + 24);
          }
          for (int64_t j = 0; j <= num_tables; ++j) {
            if (j == k) continue;
            const float g = coef(j);
            const float* zj = Z(xb, eb, e, j) + c0;
            s0 += g * Load8(zj), s1 += g * Load8(zj + 8), s2 += g * Load8(zj + 16), s3 += g * Load8(zj + 24);
          }
          std::memcpy(gk + c0, &s0, sizeof(F8)), std::memcpy(gk + c0 + 8, &s1, sizeof(F8));
          std::memcpy(gk + c0 + 16, &s2, sizeof(F8)), std::memcpy(gk + c0 + 24, &s3, sizeof(F8));
        }
        for (int64_t j = 0; j <= num_tables && c0 < e; ++j) {
          if (j == k) continue;
          const float g = coef(j);
          const float* zj = Z(xb, eb, e, j);
          for (int64_t c = c0; c < e; ++c) gk[c] += g * zj[c];
        }
      }
    }
  });
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
