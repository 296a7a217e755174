// DLRM's feature interaction on the CPU, one sample per loop iteration (the
// samples are independent, so any chunking gives the same bits).
#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu_ops.h"

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

}  // namespace

Status FeatureInteraction(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                          const Tensor& emb, Tensor* out) {
  const int64_t batch = x.size(0), d = x.size(1), ew = emb.size(1), e = ew / num_tables;
  const int64_t width = out->size(1);
  const float* px = x.data<float>();
  const float* pe = emb.data<float>();
  float* po = out->data<float>();
  const int64_t n = num_tables + 1;  // z_0 = x, z_1..z_T the tables
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
      for (int64_t k = 0; k < n; ++k) {
        const float* zk = Z(xb, eb, e, k);
        for (int64_t c = 0; c < e; ++c) t[c * stride + k] = zk[c];
      }
      float* pairs = ob + d;
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

Status FeatureInteractionBackward(const ExecContext& ctx, Interaction kind, int64_t num_tables, const Tensor& x,
                                  const Tensor& emb, const Tensor& grad_out, Tensor* grad_x, Tensor* grad_emb) {
  const int64_t batch = x.size(0), d = x.size(1), ew = emb.size(1), e = ew / num_tables;
  const int64_t width = grad_out.size(1);
  const float* px = x.data<float>();
  const float* pe = emb.data<float>();
  const float* pg = grad_out.data<float>();
  float* pgx = grad_x->data<float>();
  float* pge = grad_emb->data<float>();
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
