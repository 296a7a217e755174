// One row of a Linear layer's epilogue, x + bias and relu(x + bias): each sum
// rounded once (then ReLU's select), so AddBias, AddBiasRelu and GemmBias's
// per-tile epilogue give the same bits. o may be x. Then ReLU's select, shared
// by the activation passes and GemmReluBackward's per-tile epilogue.
#pragma once

#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace foresight::kernels::cpu {

inline void BiasRow(const float* x, const float* bias, float* o, int64_t f) {
  for (int64_t j = 0; j < f; ++j) o[j] = x[j] + bias[j];
}

inline void BiasReluRow(const float* x, const float* bias, float* o, int64_t f) {
  int64_t j = 0;
#if defined(__AVX2__)
  const __m256 zero = _mm256_setzero_ps();
  for (; j + 8 <= f; j += 8) {
    const __m256 v = _mm256_add_ps(_mm256_loadu_ps(x + j), _mm256_loadu_ps(bias + j));
    _mm256_storeu_ps(o + j, _mm256_and_ps(_mm256_cmp_ps(v, zero, _CMP_GT_OQ), v));
  }
#endif
  for (; j < f; ++j) {
    const float v = x[j] + bias[j];
    o[j] = v > 0.0f ? v : 0.0f;
  }
}

// ReLU and its gradient, branch-free: o[i] = x[i] > 0 ? v[i] : 0 with v = x
// (forward) or v = grad (backward). The sign of an activation is random,
// so a branch per element mispredicts about half the time: the backward
// pass ran at a fraction of the memory rate (it took longer than the
// dropout forward, Philox included).
inline void ReluSelect(const float* x, const float* v, float* o, int64_t s, int64_t e) {
  int64_t i = s;
#if defined(__AVX2__)
  const __m256 zero = _mm256_setzero_ps();
  for (; i + 8 <= e; i += 8) {
    const __m256 pos = _mm256_cmp_ps(_mm256_loadu_ps(x + i), zero, _CMP_GT_OQ);
    _mm256_storeu_ps(o + i, _mm256_and_ps(pos, _mm256_loadu_ps(v + i)));
  }
#endif
  for (; i < e; ++i) o[i] = x[i] > 0.0f ? v[i] : 0.0f;
}

}  // namespace foresight::kernels::cpu
