// SumRowsInChunks: out[j] = the sum over rows r of row(r)[j], in a fixed
// order. Rows are summed in chunks of RowGrain(f) rows and the chunks'
// partials are then added in chunk order, so the bits do not depend on the
// thread count. row(r) returns the row to add; it may compute the row first
// (the ReLU backward writes its gradient row, then adds it while the row is
// still in L1).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

template <typename RowFn>
void SumRowsInChunks(const ExecContext& ctx, int64_t n, int64_t f, float* out, RowFn row) {
  std::fill(out, out + f, 0.0f);
  if (n == 0 || f == 0) return;
  const int64_t grain = RowGrain(f);
  const int64_t chunks = ThreadPool::NumChunks(n, grain);
  std::vector<float> partial(static_cast<size_t>(chunks * f), 0.0f);
  ctx.pool->ParallelForChunks(n, grain, [&](int64_t c, int64_t r0, int64_t r1) {
    float* acc = partial.data() + c * f;
    for (int64_t r = r0; r < r1; ++r) {
      const float* v = row(r);
      for (int64_t j = 0; j < f; ++j) acc[j] += v[j];
    }
  });
  for (int64_t c = 0; c < chunks; ++c) {
    const float* acc = partial.data() + c * f;
    for (int64_t j = 0; j < f; ++j) out[j] += acc[j];
  }
}

}  // namespace foresight::kernels::cpu
