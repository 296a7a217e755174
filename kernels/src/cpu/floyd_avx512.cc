#include "floyd_avx512.h"

namespace foresight::kernels::cpu {

#if defined(FS_HAVE_AVX512_PHILOX)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace {

// Lane-wise [0, m) from the 64-bit draw (hi, lo), m < 2^32, as
// RngKey::BelowFrom: the high word of (hi, lo) times m is
// (hi * m + (lo * m >> 32)) >> 32, exactly, in 32 x 32 -> 64-bit products
// of the lanes' low halves.
FS_AVX512 inline __m512i Below(__m512i hi, __m512i lo, __m512i m) {
  const __m512i carry = _mm512_srli_epi64(_mm512_mul_epu32(lo, m), 32);
  return _mm512_srli_epi64(_mm512_add_epi64(_mm512_mul_epu32(hi, m), carry), 32);
}

}  // namespace

FS_AVX512 void FloydSmallAvx512(RngKey key, uint64_t s, int64_t k, int64_t n, int64_t* dst) {
  // Counters 0..7 of node s (RngKey::Bits' layout: element lo, element hi,
  // counter lo, counter hi), one per 64-bit lane: draw 2l takes counter
  // l's words x, y and draw 2l + 1 its z, w (RngKey::PairedBelow).
  const __m512i lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  __m512i x = _mm512_set1_epi64(static_cast<long long>(s & 0xFFFFFFFFu));
  __m512i y = _mm512_set1_epi64(static_cast<long long>(s >> 32));
  __m512i z = lane;
  __m512i w = _mm512_setzero_si512();
  PhiloxRounds8x64<1>(key.key, &x, &y, &z, &w);
  // Draw j picks from [0, n - k + j]: bound m = n - k + j + 1 < 2^32.
  const int64_t base = n - k;
  const __m512i m_even = _mm512_add_epi64(_mm512_set1_epi64(base + 1), _mm512_add_epi64(lane, lane));
  const __m512i m_odd = _mm512_add_epi64(m_even, _mm512_set1_epi64(1));
  // Draw order in 32-bit lanes: even draws in the low halves, odd draws
  // moved into the high halves.
  const __m512i t = _mm512_mask_blend_epi32(0xAAAA, Below(x, y, m_even), _mm512_slli_epi64(Below(z, w, m_odd), 32));
  alignas(64) uint32_t drawn[16];
  _mm512_store_si512(drawn, t);
  // The draws so far, lanes past them all ones (no position is 2^32 - 1).
  __m512i taken = _mm512_set1_epi32(-1);
  for (int64_t j = 0; j < k; ++j) {
    const uint32_t m = static_cast<uint32_t>(base + j);
    const uint32_t d = drawn[j];
    // m is new: the earlier draws were all below it.
    const uint32_t pos = _mm512_cmpeq_epi32_mask(taken, _mm512_set1_epi32(static_cast<int>(d))) != 0 ? m : d;
    taken = _mm512_mask_set1_epi32(taken, static_cast<__mmask16>(1u << j), static_cast<int>(pos));
    dst[j] = static_cast<int64_t>(pos);
  }
}

#pragma GCC diagnostic pop
#endif

}  // namespace foresight::kernels::cpu
