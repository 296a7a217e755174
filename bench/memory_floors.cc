// Measures this machine's memory rates for the access patterns of the
// training phases, so each phase can be compared with its own floor
// (its bytes / the rate of its pattern). Prints one JSON line.
//
//   build/bench/memory_floors [--threads 2] [--mib 512]
//
// Patterns: streaming read (dropout, optimizer read side), streaming
// read+write (dropout, optimizer), random row gather of 512-byte rows
// (feature gather, aggregation), and independent random 8-byte reads
// (CSR indptr lookups during sampling).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "foresight/core/rng.h"
#include "foresight/core/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Best of `reps` runs of fn (seconds): the floor, not the average.
template <typename F> double Best(int reps, F fn) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    fn();
    best = std::min(best, Seconds(t0, Clock::now()));
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2;
  int64_t mib = 512;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--threads") == 0) threads = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--mib") == 0) mib = std::atoll(argv[i + 1]);
  }
  foresight::ThreadPool pool(threads);
  const int64_t n = mib * (1 << 20) / 4;
  std::vector<float> a(n), b(n);
  pool.ParallelFor(n, 1 << 16, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) { a[i] = 1.0f + (i & 7); b[i] = 0; }
  });
  const int64_t grain = 1 << 16;

  std::vector<double> partial(foresight::ThreadPool::NumChunks(n, grain));
  const double t_read = Best(3, [&] {
    pool.ParallelForChunks(n, grain, [&](int64_t c, int64_t s, int64_t e) {
      // Eight independent sums so the loop is bound by memory, not by the
      // latency of one dependent add chain.
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      int64_t i = s;
      for (; i + 8 <= e; i += 8) {
        for (int k = 0; k < 8; ++k) acc[k] += a[i + k];
      }
      for (; i < e; ++i) acc[0] += a[i];
      partial[c] = acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];
    });
  });
  const double t_copy = Best(3, [&] {
    pool.ParallelFor(n, grain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) b[i] = a[i] * 2.0f;
    });
  });

  // Random gather of 128-float rows from `a` viewed as [n/128, 128].
  const int64_t row = 128, rows = n / row, picks = std::min<int64_t>(rows, 1 << 17);
  std::vector<int64_t> ids(picks);
  const foresight::RngKey key = foresight::RngKey::FromSeed(7);
  for (int64_t i = 0; i < picks; ++i) ids[i] = static_cast<int64_t>(key.Below(rows, i, 0));
  std::vector<float> out(picks * row);
  const double t_gather = Best(3, [&] {
    pool.ParallelFor(picks, 256, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) std::memcpy(&out[i * row], &a[ids[i] * row], row * 4);
    });
  });

  // Independent random 8-byte reads over the whole buffer.
  const int64_t lookups = 1 << 22;
  const int64_t words = n / 2;
  const int64_t* w = reinterpret_cast<const int64_t*>(a.data());
  std::vector<int64_t> where(lookups);  // drawn up front: time the reads only
  for (int64_t i = 0; i < lookups; ++i) where[i] = static_cast<int64_t>(key.Below(words, i, 1));
  std::vector<uint64_t> sums(foresight::ThreadPool::NumChunks(lookups, 1 << 14));
  const double t_random = Best(3, [&] {
    pool.ParallelForChunks(lookups, 1 << 14, [&](int64_t c, int64_t s, int64_t e) {
      uint64_t acc = 0;
      for (int64_t i = s; i < e; ++i) acc += static_cast<uint64_t>(w[where[i]]);
      sums[c] = acc;
    });
  });

  const double bytes = static_cast<double>(n) * 4;
  std::printf(
      "{\"bench\":\"memory_floors\",\"threads\":%d,\"mib\":%lld,"
      "\"stream_read_gbps\":%.2f,\"stream_read_write_gbps\":%.2f,"
      "\"gather_512b_rows_gbps\":%.2f,\"random_8b_reads_per_second\":%.4g}\n",
      threads, static_cast<long long>(mib), bytes / t_read / 1e9, 2 * bytes / t_copy / 1e9,
      2.0 * picks * row * 4 / t_gather / 1e9, lookups / t_random);
  // Keep the measured loops observable so the compiler cannot drop them.
  volatile double sink = partial[0] + static_cast<double>(sums[0]) + out[0] + b[1];
  (void)sink;
  return 0;
}
