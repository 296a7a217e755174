#include "foresight/core/thread_pool.h"

#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>

#include "testing/testing.h"

namespace foresight {
namespace {

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    std::vector<std::atomic<int>> hits(1003);
    pool.ParallelFor(1003, 17, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, ChunksIndependentOfThreadCount) {
  // Per-chunk float sums combined in chunk order give the same bits for any
  // thread count: the determinism contract kernels rely on.
  std::vector<float> x(100000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0f / (1.0f + i);
  auto sum_with = [&](int threads) {
    ThreadPool pool(threads);
    const int64_t grain = 1000;
    std::vector<float> partial(ThreadPool::NumChunks(x.size(), grain));
    pool.ParallelForChunks(x.size(), grain, [&](int64_t c, int64_t b, int64_t e) {
      float s = 0;
      for (int64_t i = b; i < e; ++i) s += x[i];
      partial[c] = s;
    });
    float s = 0;
    for (float p : partial) s += p;
    return s;
  };
  const float a = sum_with(1);
  EXPECT_EQ(a, sum_with(2));
  EXPECT_EQ(a, sum_with(3));
}

TEST(ThreadPool, NestedCallsRunInline) {
  ThreadPool pool(2);
  std::atomic<int> total{0};
  pool.ParallelFor(4, 1, [&](int64_t, int64_t) {
    pool.ParallelFor(10, 3, [&](int64_t b, int64_t e) { total += static_cast<int>(e - b); });
  });
  EXPECT_EQ(total.load(), 40);
}

TEST(ThreadPool, SubmitRunsTasks) {
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    std::atomic<int> n{0};
    std::vector<std::future<void>> fs;
    for (int i = 0; i < 8; ++i) fs.push_back(pool.Submit([&] { n++; }));
    for (auto& f : fs) f.get();
    EXPECT_EQ(n.load(), 8);
  }
}

// Idle workers spin before they sleep (thread_pool.h). Work handed over at
// every point of that cycle (while a worker spins, as it gives up, and long
// after it sleeps) must run exactly once, and a pool whose workers sleep or
// spin must shut down. Also with more threads than CPUs, where nobody spins.
TEST(ThreadPool, HandsWorkToSpinningAndSleepingWorkers) {
  for (int threads : {2, 3, 4 * OnlineCpus()}) {
    ThreadPool pool(threads);
    int64_t want = 0;
    std::atomic<int64_t> got{0};
    for (int round = 0; round < 400; ++round) {
      // Gaps from none to well past the spin time.
      if (round % 4 == 1) std::this_thread::sleep_for(std::chrono::microseconds(60));
      if (round % 4 == 3) std::this_thread::sleep_for(std::chrono::microseconds(400));
      const int64_t n = 1 + round % 7;
      pool.ParallelForChunks(n, 1, [&](int64_t c, int64_t, int64_t) { got.fetch_add(c + 1); });
      want += n * (n + 1) / 2;
      if (round % 5 == 0) {
        pool.Submit([&] { got.fetch_add(1000); }).get();
        want += 1000;
      }
    }
    EXPECT_EQ(got.load(), want) << threads << " threads";
  }
}

}  // namespace
}  // namespace foresight
