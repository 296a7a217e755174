// Element types of tensors and on-disk arrays, with f16/bf16 conversion.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "foresight/core/macros.h"
#include "foresight/core/status.h"

namespace foresight {

enum class DType : uint8_t { kF32, kF16, kBF16, kI32, kI64, kU8 };

size_t DTypeSize(DType t);
const char* DTypeName(DType t);  // "f32", "f16", "bf16", "i32", "i64", "u8"
StatusOr<DType> ParseDType(const std::string& name);
inline bool IsFloating(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }
inline bool IsInteger(DType t) { return t == DType::kI32 || t == DType::kI64 || t == DType::kU8; }

// Half-precision storage types; arithmetic happens in f32.
struct Half { uint16_t bits; };
struct BFloat16 { uint16_t bits; };

FS_HOST_DEVICE inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) { mant <<= 1; --exp; }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

// Round to nearest even.
FS_HOST_DEVICE inline uint16_t FloatToHalf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0);
  if (absx >= 0x477ff000u) return sign | 0x7c00u;  // overflow to inf
  if (absx < 0x38800000u) {                          // subnormal or zero
    if (absx < 0x33000000u) return sign;
    const uint32_t e = absx >> 23;
    const uint32_t m = (absx & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) ++r;
    return sign | r;
  }
  uint32_t r = ((absx - 0x38000000u) >> 13);
  const uint32_t rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1))) ++r;
  return sign | r;
}

FS_HOST_DEVICE inline float BFloat16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

FS_HOST_DEVICE inline uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
  const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return uint16_t((x + rounding) >> 16);
}

// Maps C++ types to DType.
template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kF32; };
template <> struct DTypeOf<Half> { static constexpr DType value = DType::kF16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::kBF16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kI32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kI64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kU8; };

}  // namespace foresight
