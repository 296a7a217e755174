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

// Loops before steps (thread_pool.h): with 2 threads (the caller and one
// worker), a loop started outside the pool while the worker runs a step
// gets the worker between the step's own chunks. The step's first chunk
// waits until the caller's loop is running; the caller's chunk 0 then
// waits until chunk 1 has run elsewhere, which only the worker can do, and
// only by lending itself from inside the step (the step's next chunk waits
// for that too). Without lending both sides wait out their deadline.
TEST(ThreadPool, StepLendsItsWorkerToAnOutsideLoop) {
  ThreadPool pool(2);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto wait_for = [&](const std::atomic<bool>& flag) {
    while (!flag.load()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  };
  std::atomic<bool> loop_started{false}, chunk1_done{false};
  std::atomic<bool> step_saw_loop{false}, step_saw_chunk1{false}, caller_saw_chunk1{false};
  std::thread::id chunk1_thread;
  std::atomic<bool> step_entered{false};
  std::vector<int64_t> step_chunks;  // read after the step's future
  std::future<void> step = pool.Submit([&] {
    pool.ParallelForChunks(3, 1, [&](int64_t c, int64_t, int64_t) {
      step_chunks.push_back(c);
      step_entered = true;
      if (c == 0) step_saw_loop = wait_for(loop_started);
      if (c == 1) step_saw_chunk1 = wait_for(chunk1_done);
    });
  });
  if (!wait_for(step_entered)) {  // the worker is inside the step
    step.get();
    FAIL() << "the step never started";
  }
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<int> ran(2, 0);
  pool.ParallelForChunks(2, 1, [&](int64_t c, int64_t, int64_t) {
    ++ran[c];
    if (c == 0) {
      loop_started = true;
      caller_saw_chunk1 = wait_for(chunk1_done);
    } else {
      chunk1_thread = std::this_thread::get_id();
      chunk1_done = true;
    }
  });
  step.get();
  EXPECT_TRUE(step_saw_loop.load());
  EXPECT_TRUE(caller_saw_chunk1.load()) << "the worker never ran the caller's chunk 1 while inside its step";
  EXPECT_TRUE(step_saw_chunk1.load());
  EXPECT_NE(chunk1_thread, caller);
  EXPECT_EQ(ran, std::vector<int>({1, 1}));
  EXPECT_EQ(step_chunks, std::vector<int64_t>({0, 1, 2}));  // the step's chunks in order, once each
  EXPECT_GE(pool.lent_helpers(), 1);
}

// Helpers run by a worker outside any step (an ordinary loop helper) do
// not lend: nested loops inside them stay inline and complete.
TEST(ThreadPool, LoopHelpersDoNotLend) {
  ThreadPool pool(2);
  std::atomic<int> total{0};
  for (int round = 0; round < 50; ++round) {
    pool.ParallelFor(4, 1, [&](int64_t, int64_t) {
      pool.ParallelFor(10, 3, [&](int64_t b, int64_t e) { total += static_cast<int>(e - b); });
    });
  }
  EXPECT_EQ(total.load(), 50 * 40);
  EXPECT_EQ(pool.lent_helpers(), 0);
}

// Spins until `flag` is set or 20 s pass; false on the deadline.
bool WaitFor(const std::atomic<bool>& flag) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// Helpers (thread_pool.h): while the one worker is held inside a step, a
// thread in HelpUntil runs the next queued step itself, and leaves as soon
// as its ready() holds. Without helping the second step would wait for the
// first, which waits for the second: both would run into their deadline.
TEST(ThreadPool, HelperRunsAQueuedStepWhileTheWorkerIsBusy) {
  ThreadPool pool(2);
  std::atomic<bool> first_entered{false}, second_done{false}, first_saw_second{false};
  std::future<void> first = pool.Submit([&] {
    first_entered = true;
    first_saw_second = WaitFor(second_done);
  });
  ASSERT_TRUE(WaitFor(first_entered));
  std::thread::id ran_on;
  std::future<void> second = pool.Submit([&] {
    ran_on = std::this_thread::get_id();
    second_done = true;
    pool.Wake();
  });
  pool.HelpUntil([&] { return second_done.load(); });
  EXPECT_TRUE(second_done.load());
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  first.get();
  second.get();
  EXPECT_TRUE(first_saw_second.load());
  EXPECT_EQ(pool.helped_tasks(), 1);
}

// A loop that a worker runs inside a step is opened to a thread waiting in
// HelpUntil: chunk 0 waits until another chunk has run on another thread,
// which needs the worker and the helper in the loop at once (the loop
// would run inline on the worker alone otherwise). Every chunk runs once.
TEST(ThreadPool, AStepsLoopOpensToAWaitingHelper) {
  ThreadPool pool(2);
  std::atomic<bool> step_entered{false}, helper_in{false}, other_chunk_done{false}, step_done{false};
  std::atomic<bool> chunk0_saw_other{false};
  std::vector<std::atomic<int>> ran(6);
  std::vector<std::thread::id> ran_on(6);
  std::future<void> step = pool.Submit([&] {
    step_entered = true;
    if (!WaitFor(helper_in)) return;
    pool.ParallelForChunks(6, 1, [&](int64_t c, int64_t, int64_t) {
      ran[c]++;
      ran_on[c] = std::this_thread::get_id();
      if (c == 0) {
        chunk0_saw_other = WaitFor(other_chunk_done);
      } else {
        other_chunk_done = true;
      }
    });
    step_done = true;
    pool.Wake();
  });
  ASSERT_TRUE(WaitFor(step_entered));  // the worker holds the step, not the helper
  std::thread::id helper_id;
  std::thread helper([&] {
    helper_id = std::this_thread::get_id();
    pool.HelpUntil([&] {
      helper_in = true;
      return step_done.load();
    });
  });
  helper.join();
  step.get();
  EXPECT_TRUE(chunk0_saw_other.load()) << "no chunk of the step's loop ran outside the worker";
  for (int c = 0; c < 6; ++c) EXPECT_EQ(ran[c].load(), 1) << "chunk " << c;
  int on_helper = 0;
  for (const std::thread::id& id : ran_on) on_helper += id == helper_id;
  EXPECT_GE(on_helper, 1);
  EXPECT_LE(on_helper, 5);  // whoever ran chunk 0 waited for a chunk run by the other
  EXPECT_GE(pool.helped_chunks(), 1);
  EXPECT_EQ(pool.helped_tasks(), 0);
}

// A helper that starts to wait while a worker's step loop is already
// running still joins it: chunk 0 (run first, by the worker, before any
// helper waits) lets the helper in, then waits until another chunk has run
// on another thread. A loop opened only to helpers waiting when it starts
// ran inline on the worker alone, and chunk 0 waited in vain.
TEST(ThreadPool, AStepsLoopOpensToAHelperThatArrivesWhileItRuns) {
  ThreadPool pool(2);
  std::atomic<bool> loop_started{false}, other_chunk_done{false}, step_done{false}, chunk0_saw_other{false};
  std::vector<std::atomic<int>> ran(8);
  std::thread::id worker_id;
  std::future<void> step = pool.Submit([&] {
    worker_id = std::this_thread::get_id();
    pool.ParallelForChunks(8, 1, [&](int64_t c, int64_t, int64_t) {
      ran[c]++;
      if (c == 0) {
        loop_started = true;
        chunk0_saw_other = WaitFor(other_chunk_done);
      } else if (std::this_thread::get_id() != worker_id) {
        other_chunk_done = true;
      }
    });
    step_done = true;
    pool.Wake();
  });
  ASSERT_TRUE(WaitFor(loop_started));  // the loop runs, and no helper waited when it started
  std::thread helper([&] { pool.HelpUntil([&] { return step_done.load(); }); });
  helper.join();
  step.get();
  EXPECT_TRUE(chunk0_saw_other.load()) << "the late helper ran no chunk of the step's loop";
  for (int c = 0; c < 8; ++c) EXPECT_EQ(ran[c].load(), 1) << "chunk " << c;
  EXPECT_GE(pool.helped_chunks(), 1);
}

// Wake() reaches a helper wherever it is in its wait (checking ready(),
// spinning, asleep), with or without workers and with more threads than
// CPUs (no spinning): no wake-up is lost, so every round ends.
TEST(ThreadPool, WakeReachesAHelperAtEveryPointOfItsWait) {
  for (int threads : {1, 2, 4 * OnlineCpus()}) {
    ThreadPool pool(threads);
    for (int round = 0; round < 300; ++round) {
      std::atomic<bool> ready{false}, returned{false};
      std::thread helper([&] {
        pool.HelpUntil([&] { return ready.load(); });
        returned = true;
      });
      if (round % 3 == 1) std::this_thread::sleep_for(std::chrono::microseconds(60));
      if (round % 3 == 2) std::this_thread::sleep_for(std::chrono::microseconds(400));
      ready = true;
      pool.Wake();
      const bool ended = WaitFor(returned);
      EXPECT_TRUE(ended) << threads << " threads, round " << round << ": the helper missed its wake-up";
      while (!returned.load()) pool.Wake();  // unblock it to join
      helper.join();
      if (!ended) return;
    }
  }
}

// Steps and loops submitted while a helper waits reach it; with helpers
// busy, sleeping or away, every loop still covers each index once and
// every step runs once (the pipeline's shape: one thread helping between
// its own loops, steps that run loops on the worker).
TEST(ThreadPool, LoopsAndStepsCompleteWhileAHelperComesAndGoes) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    std::atomic<int64_t> steps_done{0}, covered{0};
    int64_t want_covered = 0;
    for (int round = 0; round < 200; ++round) {
      const int64_t n = 1 + round % 9;
      want_covered += 2 * n;
      std::future<void> step = pool.Submit([&pool, &covered, &steps_done, n] {
        pool.ParallelForChunks(n, 1, [&](int64_t, int64_t b, int64_t e) { covered.fetch_add(e - b); });
        steps_done.fetch_add(1);
        pool.Wake();
      });
      const int64_t want_steps = round + 1;
      pool.HelpUntil([&] { return steps_done.load() == want_steps; });
      pool.ParallelForChunks(n, 1, [&](int64_t, int64_t b, int64_t e) { covered.fetch_add(e - b); });
      step.get();
    }
    EXPECT_EQ(steps_done.load(), 200) << threads << " threads";
    EXPECT_EQ(covered.load(), want_covered) << threads << " threads";
  }
}

}  // namespace
}  // namespace foresight
