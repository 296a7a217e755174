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

// Words x and y of key.Bits(element, first + j) for j in [0, n): the two
// words RngKey::Below draws from. With AVX2 the words come eight at a
// time and the last group is computed whole: x and y need room for n
// rounded up to a multiple of kPhiloxLanes (the extra words are valid
// draws, just not asked for).
constexpr int64_t kPhiloxLanes = 8;
inline void PhiloxDrawsXY(RngKey key, uint64_t element, uint64_t first, int64_t n, uint32_t* x, uint32_t* y) {
  int64_t j = 0;
#if defined(__AVX2__)
  const __m256i lo = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(element)));
  const __m256i hi = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(element >> 32)));
  for (; j < n; j += 8) {
    const uint64_t d0 = first + static_cast<uint64_t>(j);
    // Draw counters d0 .. d0 + 7 (ctr_hi): low words, and high words (equal
    // across the lanes unless the low word wraps, handled lane by lane).
    alignas(32) uint32_t dl[8], dh[8];
    for (int l = 0; l < 8; ++l) {
      dl[l] = static_cast<uint32_t>(d0 + static_cast<uint64_t>(l));
      dh[l] = static_cast<uint32_t>((d0 + static_cast<uint64_t>(l)) >> 32);
    }
    __m256i c0 = lo, c1 = hi;
    __m256i c2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(dl));
    __m256i c3 = _mm256_load_si256(reinterpret_cast<const __m256i*>(dh));
    Philox8(key.key, &c0, &c1, &c2, &c3);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + j), c0);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + j), c1);
  }
#endif
  for (; j < n; ++j) {
    const Uint4 b = key.Bits(element, first + static_cast<uint64_t>(j));
    x[j] = b.x;
    y[j] = b.y;
  }
}

// RngKey::Below(n, ...) from the words x, y of the same draw.
inline uint64_t BelowFromXY(uint32_t x, uint32_t y, uint64_t n) {
  const uint64_t r = (static_cast<uint64_t>(x) << 32) | y;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(r) * n) >> 64);
}

}  // namespace foresight::kernels::cpu
