// OrderedChunks (kernels/src/cpu/ordered_chunks.h): the in-order consumer
// that lets the sampler relabel while it still samples.
#include "ordered_chunks.h"

#include <atomic>
#include <thread>
#include <vector>

#include "foresight/core/thread_pool.h"
#include "testing/testing.h"

namespace foresight::kernels::cpu {
namespace {

// Every chunk is consumed once, in order, and only on the thread that made
// the OrderedChunks, even when the other threads finish chunks that are
// next in line (a consumer that ran there moved its working set between
// cores). The loop makes the worker finish such chunks: after each of its
// own, the caller waits until a worker has finished one.
TEST(OrderedChunks, ConsumesInOrderOnTheOwningThreadOnly) {
  ThreadPool pool(2);
  constexpr int64_t kChunks = 400;
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<int64_t> consumed;
  int64_t elsewhere = 0;
  OrderedChunks ordered(kChunks, [&](int64_t c) {
    consumed.push_back(c);
    elsewhere += std::this_thread::get_id() != caller;
    return Status::OK();
  });
  std::atomic<int64_t> worker_chunks{0};
  int64_t caller_chunks = 0;
  pool.ParallelForChunks(kChunks, 1, [&](int64_t c, int64_t, int64_t) {
    ordered.Done(c);
    if (std::this_thread::get_id() != caller) {
      worker_chunks.fetch_add(1);
      return;
    }
    // Having reported its chunk, the caller lets a worker finish one, which
    // is then next in line, unless every other chunk is done (bounded: a
    // pool whose worker never runs still ends, and the check on
    // `worker_chunks` below fails).
    ++caller_chunks;
    const int64_t seen = worker_chunks.load();
    for (int spin = 0; spin < 2000000; ++spin) {
      const int64_t now = worker_chunks.load();
      if (now != seen || now + caller_chunks == kChunks) break;
      std::this_thread::yield();
    }
  });
  ASSERT_OK(ordered.Finish());
  EXPECT_GT(worker_chunks.load(), 0) << "the test needs the worker to finish chunks";
  EXPECT_EQ(elsewhere, 0) << "chunks consumed off the owning thread";
  ASSERT_EQ(consumed.size(), static_cast<size_t>(kChunks));
  for (int64_t c = 0; c < kChunks; ++c) EXPECT_EQ(consumed[static_cast<size_t>(c)], c);
}

// The consumer's first error stops the consumption and is Finish's result.
TEST(OrderedChunks, FirstErrorStopsTheConsumer) {
  ThreadPool pool(2);
  int calls = 0;
  OrderedChunks ordered(50, [&](int64_t c) {
    ++calls;
    return c == 3 ? DataLoss("chunk 3 refused") : Status::OK();
  });
  pool.ParallelForChunks(50, 1, [&](int64_t c, int64_t, int64_t) { ordered.Done(c); });
  EXPECT_ERROR_CONTAINS(ordered.Finish(), "chunk 3 refused");
  EXPECT_EQ(calls, 4);
}

}  // namespace
}  // namespace foresight::kernels::cpu
