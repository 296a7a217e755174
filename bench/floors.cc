#include "floors.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "foresight/core/rng.h"
#include "foresight/core/tensor.h"

namespace foresight::bench {
namespace {

using Clock = std::chrono::steady_clock;

template <typename F> double Best(int reps, F fn) {
  fn();  // warm-up: page faults and cache fill are not part of the floor
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

// Host memory from foresight's allocator (so the floors see the same page
// size as the kernels' buffers), filled in parallel.
Tensor Filled(ThreadPool* pool, int64_t floats) {
  Tensor t = Tensor::Empty({std::max<int64_t>(floats, 1)}, DType::kF32);
  float* p = t.data<float>();
  pool->ParallelFor(t.numel(), 1 << 16, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) p[i] = 1.0f + static_cast<float>(i & 7);
  });
  return t;
}

std::vector<int64_t> RandomIds(int64_t n, int64_t below, uint64_t stream) {
  const RngKey key = RngKey::FromSeed(7);
  std::vector<int64_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<int64_t>(key.Below(static_cast<uint64_t>(below), static_cast<uint64_t>(i), stream));
  return ids;
}

volatile double g_sink;  // keeps measured loops observable

}  // namespace

double StreamReadRate(const FloorOptions& o, int64_t bytes) {
  const int64_t n = bytes / 4;
  Tensor a = Filled(o.pool, n);
  const float* pa = a.data<float>();
  const int64_t grain = 1 << 16;
  std::vector<double> partial(static_cast<size_t>(ThreadPool::NumChunks(n, grain)));
  const double t = Best(o.reps, [&] {
    o.pool->ParallelForChunks(n, grain, [&](int64_t c, int64_t s, int64_t e) {
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int64_t i = s;
      for (; i + 8 <= e; i += 8) {
        for (int k = 0; k < 8; ++k) acc[k] += pa[i + k];
      }
      for (; i < e; ++i) acc[0] += pa[i];
      partial[c] = acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];
    });
  });
  g_sink = partial[0];
  return static_cast<double>(n) * 4 / t;
}

double StreamReadWriteRate(const FloorOptions& o, int64_t bytes) {
  const int64_t n = bytes / 8;
  Tensor a = Filled(o.pool, n), b = Filled(o.pool, n);
  const float* pa = a.data<float>();
  float* pb = b.data<float>();
  const double t = Best(o.reps, [&] {
    o.pool->ParallelFor(n, 1 << 16, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) pb[i] = pa[i] * 2.0f;
    });
  });
  g_sink = pb[n / 2];
  return static_cast<double>(n) * 8 / t;
}

double RowGatherRate(const FloorOptions& o, int64_t table_rows, int64_t row_bytes, int64_t picks) {
  Tensor table = Filled(o.pool, table_rows * row_bytes / 4);
  Tensor out = Filled(o.pool, picks * row_bytes / 4);
  const std::vector<int64_t> ids = RandomIds(picks, table_rows, 0);
  const char* src = static_cast<const char*>(table.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  const size_t rb = static_cast<size_t>(row_bytes);
  const double t = Best(o.reps, [&] {
    o.pool->ParallelFor(picks, 256, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) std::memcpy(dst + i * rb, src + ids[i] * rb, rb);
    });
  });
  g_sink = out.data<float>()[0];
  return 2.0 * static_cast<double>(picks) * static_cast<double>(row_bytes) / t;
}

double RowReadRate(const FloorOptions& o, int64_t table_rows, int64_t row_bytes, int64_t picks) {
  const int64_t f = row_bytes / 4;
  Tensor table = Filled(o.pool, table_rows * f);
  const std::vector<int64_t> ids = RandomIds(picks, table_rows, 1);
  const float* src = table.data<float>();
  const int64_t grain = 1024;
  std::vector<float> sums(static_cast<size_t>(ThreadPool::NumChunks(picks, grain)));
  const double t = Best(o.reps, [&] {
    o.pool->ParallelForChunks(picks, grain, [&](int64_t c, int64_t s, int64_t e) {
      std::vector<float> acc(static_cast<size_t>(f), 0.0f);
      float* __restrict a = acc.data();
      for (int64_t i = s; i < e; ++i) {
        const float* __restrict r = src + ids[i] * f;
        if (i + 1 < e) __builtin_prefetch(src + ids[i + 1] * f);
        for (int64_t j = 0; j < f; ++j) a[j] += r[j];
      }
      sums[c] = a[0];
    });
  });
  g_sink = sums[0];
  return static_cast<double>(picks) * static_cast<double>(row_bytes) / t;
}

double RandomReadRate(const FloorOptions& o, int64_t table_bytes, int64_t lookups) {
  const int64_t words = table_bytes / 8;
  Tensor table = Filled(o.pool, words * 2);
  const int64_t* w = reinterpret_cast<const int64_t*>(table.raw_data());
  const std::vector<int64_t> where = RandomIds(lookups, words, 2);  // drawn up front: time the reads only
  const int64_t grain = 1 << 14;
  std::vector<uint64_t> sums(static_cast<size_t>(ThreadPool::NumChunks(lookups, grain)));
  const double t = Best(o.reps, [&] {
    o.pool->ParallelForChunks(lookups, grain, [&](int64_t c, int64_t s, int64_t e) {
      uint64_t acc = 0;
      for (int64_t i = s; i < e; ++i) acc += static_cast<uint64_t>(w[where[i]]);
      sums[c] = acc;
    });
  });
  g_sink = static_cast<double>(sums[0]);
  return static_cast<double>(lookups) / t;
}

}  // namespace foresight::bench
