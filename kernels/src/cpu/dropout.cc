// Inverted dropout. The keep decision of flat element i is
// ctx.rng.StreamUniform(i, 0) >= p: a pure function of the key and i. One
// Philox call serves four elements, which is what makes dropout cheap next
// to the GEMMs (a call per element cost more than the layer's matmul).
#include <cmath>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

static_assert(kElementGrain % 32 == 0, "dropout groups four elements per Philox call, 32 per AVX2 step");

namespace {

#if defined(__AVX2__)
// Lane-wise 32 x 32 -> 64-bit products of `a` and the constant `m`: low and
// high halves, as the scalar Philox round takes them.
inline void MulHiLo(__m256i a, __m256i m, __m256i* hi, __m256i* lo) {
  const __m256i even = _mm256_mul_epu32(a, m);                         // lanes 0,2,4,6 as 64-bit
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);  // lanes 1,3,5,7
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

// Dropout of the 32 elements starting at g (a multiple of 4): Philox4x32-10
// of the counters (g / 4 + j, draw 0) for j = 0..7 in the eight lanes, the
// same words as RngKey::Bits, so results equal the scalar loop bit for bit.
// That loop is bound by Philox's multiplies (about 12 cycles per element);
// eight lanes at once bring it near the memory floor.
inline void Dropout32(const RngKey& rng, int64_t g, int32_t threshold, float scale, const float* px, float* po,
                      uint8_t* pm) {
  const uint64_t base = static_cast<uint64_t>(g) >> 2;
  alignas(32) uint32_t lo_words[8], hi_words[8];
  for (int j = 0; j < 8; ++j) {
    lo_words[j] = static_cast<uint32_t>(base + j);
    hi_words[j] = static_cast<uint32_t>((base + j) >> 32);
  }
  __m256i c0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo_words));
  __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi_words));
  __m256i c2 = _mm256_setzero_si256(), c3 = _mm256_setzero_si256();
  uint32_t k0 = static_cast<uint32_t>(rng.key), k1 = static_cast<uint32_t>(rng.key >> 32);
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(0xCD9E8D57u));
  for (int r = 0; r < 10; ++r) {
    __m256i hi0, lo0, hi1, lo1;
    MulHiLo(c0, m0, &hi0, &lo0);
    MulHiLo(c2, m1, &hi1, &lo1);
    const __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32(static_cast<int>(k0)));
    const __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32(static_cast<int>(k1)));
    c1 = lo1;
    c3 = lo0;
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  // Words (c0..c3) of lane j belong to elements g + 4j .. g + 4j + 3:
  // transpose the 4 x 8 word matrix into element order.
  const __m256i t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpackhi_epi32(c0, c1);
  const __m256i t2 = _mm256_unpacklo_epi32(c2, c3), t3 = _mm256_unpackhi_epi32(c2, c3);
  const __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
  const __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
  const __m256i words[4] = {_mm256_permute2x128_si256(u0, u1, 0x20), _mm256_permute2x128_si256(u2, u3, 0x20),
                            _mm256_permute2x128_si256(u0, u1, 0x31), _mm256_permute2x128_si256(u2, u3, 0x31)};
  // keep <=> (w >> 8) * 2^-24 >= p <=> (w >> 8) >= threshold (exact: both
  // sides are integers below 2^24 scaled by a power of two).
  const __m256i below = _mm256_set1_epi32(threshold - 1);
  const __m256 vscale = _mm256_set1_ps(scale);
  __m256i keep[4];
  for (int q = 0; q < 4; ++q) {
    keep[q] = _mm256_cmpgt_epi32(_mm256_srli_epi32(words[q], 8), below);
    const __m256 x = _mm256_loadu_ps(px + g + 8 * q);
    _mm256_storeu_ps(po + g + 8 * q, _mm256_and_ps(_mm256_castsi256_ps(keep[q]), _mm256_mul_ps(x, vscale)));
  }
  if (pm != nullptr) {
    // -1/0 dwords -> 0/1 bytes in element order.
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(keep[0], keep[1]), _mm256_packs_epi32(keep[2], keep[3]));
    const __m256i ordered = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(pm + g), _mm256_and_si256(ordered, _mm256_set1_epi8(1)));
  }
}
#endif

}  // namespace

Status Dropout(const ExecContext& ctx, float p, const Tensor& x, Tensor* out, Tensor* mask) {
  const float* px = x.data<float>();
  float* po = out->data<float>();
  uint8_t* pm = mask != nullptr ? mask->data<uint8_t>() : nullptr;
  const float scale = 1.0f / (1.0f - p);
  const RngKey rng = ctx.rng;
  ctx.pool->ParallelFor(x.numel(), kElementGrain, [&](int64_t s, int64_t e) {
    // Chunks start at multiples of kElementGrain, a multiple of 32, so each
    // group of four elements shares one Philox call.
    int64_t g = s;
#if defined(__AVX2__)
    // ceil(p * 2^24): p * 2^24 is exact in float for p in [0, 1).
    const int32_t threshold = static_cast<int32_t>(std::ceil(p * 16777216.0f));
    for (; g + 32 <= e; g += 32) Dropout32(rng, g, threshold, scale, px, po, pm);
#endif
    for (; g < e; g += 4) {
      const Uint4 b = rng.Bits(static_cast<uint64_t>(g) >> 2, 0);
      const uint32_t words[4] = {b.x, b.y, b.z, b.w};
      const int64_t n = e - g < 4 ? e - g : 4;
      for (int64_t k = 0; k < n; ++k) {
        const bool keep = static_cast<float>(words[k] >> 8) * (1.0f / 16777216.0f) >= p;
        po[g + k] = keep ? px[g + k] * scale : 0.0f;
        if (pm != nullptr) pm[g + k] = keep ? 1 : 0;
      }
    }
  });
  return Status::OK();
}

Status DropoutBackward(const ExecContext& ctx, float p, const Tensor& mask, const Tensor& grad_out,
                       Tensor* grad_x) {
  const uint8_t* pm = mask.data<uint8_t>();
  const float* pg = grad_out.data<float>();
  float* po = grad_x->data<float>();
  const float scale = 1.0f / (1.0f - p);
  ctx.pool->ParallelFor(grad_out.numel(), kElementGrain, [pm, pg, po, scale](int64_t s, int64_t e) {
    // Branch-free: the mask is random, so a branch per element mispredicts
    // half the time (it ran at a fifth of the memory rate).
    const uint8_t* __restrict m = pm;
    const float* __restrict g = pg;
    float* __restrict o = po;
    int64_t i = s;
#if defined(__AVX2__)
    const __m256 vscale = _mm256_set1_ps(scale);
    for (; i + 8 <= e; i += 8) {
      const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(m + i));
      const __m256i keep = _mm256_cmpgt_epi32(_mm256_cvtepu8_epi32(bytes), _mm256_setzero_si256());
      const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(g + i), vscale);
      _mm256_storeu_ps(o + i, _mm256_and_ps(_mm256_castsi256_ps(keep), v));
    }
#endif
    for (; i < e; ++i) {
      const float v = g[i] * scale;
      o[i] = m[i] != 0 ? v : 0.0f;
    }
  });
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
