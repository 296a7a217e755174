// Philox4x32-10 on several counters at once (AVX2: eight lanes), bit for
// bit the words of RngKey::Bits. Ops that draw many numbers per call
// (dropout, neighbour sampling) are otherwise bound by Philox's scalar
// multiplies: ten rounds of two 32 x 32 -> 64-bit products per call.
#pragma once

#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "foresight/core/rng.h"

namespace foresight::kernels::cpu {

#if defined(__AVX2__)
// Lane-wise 32 x 32 -> 64-bit products of `a` and the constant `m`: low and
// high halves, as the scalar Philox round takes them.
inline void PhiloxMulHiLo(__m256i a, __m256i m, __m256i* hi, __m256i* lo) {
  const __m256i even = _mm256_mul_epu32(a, m);                         // lanes 0,2,4,6 as 64-bit
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);  // lanes 1,3,5,7
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

// Philox4x32-10 of the eight counters (c0, c1, c2, c3) lane by lane, in
// place: afterwards lane j holds the words (x, y, z, w) of its counter.
inline void Philox8(uint64_t key, __m256i* c0, __m256i* c1, __m256i* c2, __m256i* c3) {
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(0xCD9E8D57u));
  __m256i a = *c0, b = *c1, c = *c2, d = *c3;
  for (int r = 0; r < 10; ++r) {
    __m256i hi0, lo0, hi1, lo1;
    PhiloxMulHiLo(a, m0, &hi0, &lo0);
    PhiloxMulHiLo(c, m1, &hi1, &lo1);
    const __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, b), _mm256_set1_epi32(static_cast<int>(k0)));
    const __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, d), _mm256_set1_epi32(static_cast<int>(k1)));
    b = lo1;
    d = lo0;
    a = n0;
    c = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  *c0 = a;
  *c1 = b;
  *c2 = c;
  *c3 = d;
}
#endif

// The words RngKey::PairedBelow takes for draws first .. first + n - 1 of
// `element` (`first` even): draw d's high word in x[d - first] and low
// word in y[d - first], that is x and y of Bits(element, d / 2) for an even
// d and z and w for an odd one. With AVX2 the words come sixteen draws
// (eight Philox counters) at a time and the last group is computed whole:
// x and y need room for n rounded up to a multiple of kPhiloxDrawsPerStep
// (the extra words are valid draws, just not asked for).
constexpr int64_t kPhiloxDrawsPerStep = 16;
inline void PhiloxDrawsXY(RngKey key, uint64_t element, uint64_t first, int64_t n, uint32_t* x, uint32_t* y) {
  int64_t j = 0;
#if defined(__AVX2__)
  const __m256i lo = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(element)));
  const __m256i hi = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(element >> 32)));
  for (; j < n; j += kPhiloxDrawsPerStep) {
    const uint64_t c = (first + static_cast<uint64_t>(j)) >> 1;
    // Counters c .. c + 7 (ctr_hi): low words, and high words (equal
    // across the lanes unless the low word wraps, handled lane by lane).
    alignas(32) uint32_t cl[8], ch[8];
    for (int l = 0; l < 8; ++l) {
      cl[l] = static_cast<uint32_t>(c + static_cast<uint64_t>(l));
      ch[l] = static_cast<uint32_t>((c + static_cast<uint64_t>(l)) >> 32);
    }
    __m256i c0 = lo, c1 = hi;
    __m256i c2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(cl));
    __m256i c3 = _mm256_load_si256(reinterpret_cast<const __m256i*>(ch));
    Philox8(key.key, &c0, &c1, &c2, &c3);
    // Lane l holds counter c + l's words: interleave x with z and y with w
    // into draw order (x0 z0 x1 z1 ...), eight draws per 128-bit half.
    const __m256i xz_lo = _mm256_unpacklo_epi32(c0, c2), xz_hi = _mm256_unpackhi_epi32(c0, c2);
    const __m256i yw_lo = _mm256_unpacklo_epi32(c1, c3), yw_hi = _mm256_unpackhi_epi32(c1, c3);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + j), _mm256_permute2x128_si256(xz_lo, xz_hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + j + 8), _mm256_permute2x128_si256(xz_lo, xz_hi, 0x31));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + j), _mm256_permute2x128_si256(yw_lo, yw_hi, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + j + 8), _mm256_permute2x128_si256(yw_lo, yw_hi, 0x31));
  }
#endif
  for (; j < n; ++j) {
    const uint64_t d = first + static_cast<uint64_t>(j);
    const Uint4 b = key.Bits(element, d >> 1);
    x[j] = (d & 1) == 0 ? b.x : b.z;
    y[j] = (d & 1) == 0 ? b.y : b.w;
  }
}

// RngKey::BelowFrom(n) of the draw whose words are x (high) and y (low).
inline uint64_t BelowFromXY(uint32_t x, uint32_t y, uint64_t n) {
  return RngKey::BelowFrom((static_cast<uint64_t>(x) << 32) | y, n);
}

}  // namespace foresight::kernels::cpu
