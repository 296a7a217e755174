// Philox4x32-10 with AVX-512, chosen at run time where the CPU has it: the
// counters are kept one per 64-bit lane (the word in the low half, the high
// half ignored: vpmuludq reads only low halves), so a round's 32 x 32 ->
// 64-bit product needs no shuffles and its two xors are one vpternlogd.
// About 2.5x fewer instructions per Philox call than the eight-lane AVX2
// round (philox_simd.h), with the same words, so the same bits as
// RngKey::Bits.
#pragma once

#include <cstdint>

#include "foresight/core/rng.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define FS_HAVE_AVX512_PHILOX 1
#include <immintrin.h>
#define FS_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#endif

namespace foresight::kernels::cpu {

#if defined(FS_HAVE_AVX512_PHILOX)
// GCC 12's AVX-512 intrinsics seed their unused merge operand with an
// "undefined" value that -Wuninitialized reports when they are compiled
// under a target attribute; the operand is never read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Whether this CPU runs the AVX-512 paths (checked once).
bool HaveAvx512();

// Ten Philox rounds on kSets independent sets of eight counters (words
// c0..c3, one counter per 64-bit lane, low halves), in place: afterwards
// the low halves hold the words x, y, z, w. Several sets hide vpmuludq's
// latency.
template <int kSets>
FS_AVX512 inline void PhiloxRounds8x64(uint64_t key, __m512i* c0, __m512i* c1, __m512i* c2, __m512i* c3) {
  const __m512i m0 = _mm512_set1_epi64(0xD2511F53ll), m1 = _mm512_set1_epi64(0xCD9E8D57ll);
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int r = 0; r < 10; ++r) {
    const __m512i vk0 = _mm512_set1_epi32(static_cast<int>(k0)), vk1 = _mm512_set1_epi32(static_cast<int>(k1));
    for (int s = 0; s < kSets; ++s) {
      const __m512i p0 = _mm512_mul_epu32(c0[s], m0);  // lo(p0) in the low half, hi(p0) in the high half
      const __m512i p1 = _mm512_mul_epu32(c2[s], m1);
      const __m512i n0 = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p1, 32), c1[s], vk0, 0x96);  // xor3
      const __m512i n2 = _mm512_ternarylogic_epi32(_mm512_srli_epi64(p0, 32), c3[s], vk1, 0x96);
      c1[s] = p1;
      c3[s] = p0;
      c0[s] = n0;
      c2[s] = n2;
    }
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

// PhiloxDrawsXY (philox_simd.h) with AVX-512: the same words, sixteen
// draws (eight Philox counters) per step; x and y need room for n rounded
// up to a multiple of kPhiloxDrawsPerStep (16).
FS_AVX512 void PhiloxDrawsXYAvx512(RngKey key, uint64_t element, uint64_t first, int64_t n, uint32_t* x,
                                   uint32_t* y);

#pragma GCC diagnostic pop
#endif

}  // namespace foresight::kernels::cpu
