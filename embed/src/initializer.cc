#include "foresight/embed/initializer.h"

#include <cmath>
#include <cstring>

#include "foresight/core/rng.h"

namespace foresight::embed {

float InitScale(const EmbeddingInit& init, int64_t rows) {
  if (init.scale > 0) return init.scale;
  return rows > 0 ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(rows))) : 0.01f;
}

void InitializeRow(uint64_t seed, float scale, const kernels::EmbeddingRowLayout& layout, int64_t key, void* row) {
  const RngKey rng = RngKey::FromSeed(seed);
  std::memset(row, 0, static_cast<size_t>(layout.row_bytes()));
  float* f32 = static_cast<float*>(row);
  Half* f16 = static_cast<Half*>(row);
  // One Philox block gives four values: element = key, draw = j / 4.
  for (int64_t j = 0; j < layout.dim; j += 4) {
    const Uint4 b = rng.Bits(static_cast<uint64_t>(key), static_cast<uint64_t>(j / 4));
    const uint32_t words[4] = {b.x, b.y, b.z, b.w};
    for (int64_t i = 0; i < 4 && j + i < layout.dim; ++i) {
      const float u = static_cast<float>(words[i] >> 8) * (1.0f / 16777216.0f);  // [0, 1)
      const float v = (2.0f * u - 1.0f) * scale;
      if (layout.dtype == DType::kF16) {
        f16[j + i].bits = FloatToHalf(v);
      } else {
        f32[j + i] = v;
      }
    }
  }
}

}  // namespace foresight::embed
