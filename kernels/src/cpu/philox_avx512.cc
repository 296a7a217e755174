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

// Counter words of draws first + 8 s .. first + 8 s + 7 of `element`, as
// RngKey::Bits lays them out: (element lo, element hi, draw lo, draw hi).
template <int kSets>
FS_AVX512 inline void DrawSets(RngKey key, uint64_t element, uint64_t first, uint32_t* x, uint32_t* y) {
  const __m512i iota = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  __m512i c0[kSets], c1[kSets], c2[kSets], c3[kSets];
  for (int s = 0; s < kSets; ++s) {
    const __m512i draw = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(first + 8 * s)), iota);
    c0[s] = _mm512_set1_epi64(static_cast<long long>(element & 0xFFFFFFFFu));
    c1[s] = _mm512_set1_epi64(static_cast<long long>(element >> 32));
    c2[s] = draw;                        // the low 32 bits count
    c3[s] = _mm512_srli_epi64(draw, 32);
  }
  PhiloxRounds8x64<kSets>(key.key, c0, c1, c2, c3);
  for (int s = 0; s < kSets; ++s) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + 8 * s), _mm512_cvtepi64_epi32(c0[s]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + 8 * s), _mm512_cvtepi64_epi32(c1[s]));
  }
}

}  // namespace

FS_AVX512 void PhiloxDrawsXYAvx512(RngKey key, uint64_t element, uint64_t first, int64_t n, uint32_t* x,
                                   uint32_t* y) {
  int64_t j = 0;
  for (; j + 8 < n; j += 16) DrawSets<2>(key, element, first + static_cast<uint64_t>(j), x + j, y + j);
  for (; j < n; j += 8) DrawSets<1>(key, element, first + static_cast<uint64_t>(j), x + j, y + j);
}

#pragma GCC diagnostic pop
#endif

}  // namespace foresight::kernels::cpu
