#include "philox_avx512.h"

namespace foresight::kernels::cpu {

#if defined(FS_HAVE_AVX512_PHILOX)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

bool HaveAvx512() {
  static const bool have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return have;
}

namespace {

// The words of draws first + 16 s .. first + 16 s + 15 of `element`
// (`first` even), as PhiloxDrawsXY (philox_simd.h) lays them out: set s
// runs the eight counters (first / 2 + 8 s + l), whose words are (element
// lo, element hi, counter lo, counter hi) as RngKey::Bits has them, and
// its x and z words interleave into the draws' high words, y and w into
// their low words.
template <int kSets>
FS_AVX512 inline void DrawSets(RngKey key, uint64_t element, uint64_t first, uint32_t* x, uint32_t* y) {
  const __m512i iota = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  __m512i c0[kSets], c1[kSets], c2[kSets], c3[kSets];
  for (int s = 0; s < kSets; ++s) {
    const __m512i counter =
        _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>((first >> 1) + 8 * s)), iota);
    c0[s] = _mm512_set1_epi64(static_cast<long long>(element & 0xFFFFFFFFu));
    c1[s] = _mm512_set1_epi64(static_cast<long long>(element >> 32));
    c2[s] = counter;  // the low 32 bits count
    c3[s] = _mm512_srli_epi64(counter, 32);
  }
  PhiloxRounds8x64<kSets>(key.key, c0, c1, c2, c3);
  // Each word sits in the low half of its 64-bit lane (the high half is
  // not part of it): z and w move to the high halves, next to x and y.
  for (int s = 0; s < kSets; ++s) {
    _mm512_storeu_si512(x + 16 * s, _mm512_mask_blend_epi32(0xAAAA, c0[s], _mm512_slli_epi64(c2[s], 32)));
    _mm512_storeu_si512(y + 16 * s, _mm512_mask_blend_epi32(0xAAAA, c1[s], _mm512_slli_epi64(c3[s], 32)));
  }
}

}  // namespace

FS_AVX512 void PhiloxDrawsXYAvx512(RngKey key, uint64_t element, uint64_t first, int64_t n, uint32_t* x,
                                   uint32_t* y) {
  int64_t j = 0;
  for (; j + 16 < n; j += 32) DrawSets<2>(key, element, first + static_cast<uint64_t>(j), x + j, y + j);
  for (; j < n; j += 16) DrawSets<1>(key, element, first + static_cast<uint64_t>(j), x + j, y + j);
}

#pragma GCC diagnostic pop
#endif

}  // namespace foresight::kernels::cpu
