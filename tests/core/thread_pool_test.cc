#include "foresight/core/thread_pool.h"

#include <atomic>
#include <numeric>

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

}  // namespace
}  // namespace foresight
