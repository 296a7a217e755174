// exp and erf in plain f32 arithmetic that GCC vectorises (std::exp and
// std::erf are scalar calls into libm, which left softmax and GELU at a
// fraction of the rate of the GEMMs around them). Both are within a few
// ulp of libm over the ranges the transformer ops use.
#pragma once

#include <cstdint>
#include <cstring>

namespace foresight::kernels::cpu {

// e^x, Cephes' expf scheme: x = n ln2 + r with |r| <= ln2 / 2, a degree-6
// polynomial for e^r, 2^n from the exponent bits. Exactly 0 below -87.3
// (including -inf), +huge (not inf) above 88.7.
inline float FastExp(float x) {
  const bool under = x < -87.3f;
  x = x > 88.7f ? 88.7f : x;
  x = x < -87.3f ? -87.3f : x;
  // n = round(x / ln2) by the 1.5 * 2^23 trick: adding it pushes the
  // fraction out of the mantissa (round to nearest), subtracting brings the
  // integer back. floorf would do, but GCC leaves it a libm call unless
  // -ffast-math, which kept these loops scalar.
  const float fn = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(fn) + 127) << 23;
  float two_n;
  std::memcpy(&two_n, &bits, sizeof two_n);
  return under ? 0.0f : p * two_n;
}

// erf(x) by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7, about
// the f32 rounding of values near 1), odd-extended.
inline float FastErf(float x) {
  const float a = x < 0.0f ? -x : x;
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float y = 1.061405429f;
  y = y * t - 1.453152027f;
  y = y * t + 1.421413741f;
  y = y * t - 0.284496736f;
  y = y * t + 0.254829592f;
  y = 1.0f - y * t * FastExp(-a * a);
  return x < 0.0f ? -y : y;
}

}  // namespace foresight::kernels::cpu
