// ThreadPool: the process's one CPU budget. Every parallel loop (kernels, BLAS
// row blocks, the pipeline's stages) runs here, so nothing oversubscribes the
// cores. Loop chunking depends only on the problem size and grain, never on
// the thread count, so per-chunk partial results combine in a fixed order and
// results are identical with 1 or N threads.
//
// A thread that runs out of work spins briefly (kSpinNanos) before it sleeps
// on a condition variable. A training step is a chain of parallel loops a
// few microseconds to a millisecond long; waking a sleeping thread costs
// tens of microseconds on a virtual machine (the idle vCPU must be woken by
// the hypervisor), enough that short loops ran on the caller alone before
// the worker woke. Spinning is off when the pool has more threads than the
// machine has CPUs, where a spinner would take a core from a thread with
// work.
//
// Loops before steps: the helper tasks of a parallel loop (queued by a
// caller outside the pool, e.g. the training step's thread) go to the front
// of the queue, ahead of queued steps (Submit), and a worker that is
// running a step lends itself to them between the chunks of the step's own
// loops (which run inline). Why: with 2 threads the pool has one worker;
// while it ran a pipeline step (sampling, a row gather) the training
// step's loops ran on one thread, and the epoch time moved with how much
// of that step work happened to fall on the training step's parallel
// loops rather than on its serial parts (bench/RESULTS.md, issue 19). A
// lent worker runs only loop helpers (never another step), one level deep,
// and only at a chunk boundary of its step, so nothing of the step is
// held but what its caller holds around the loop; chunking and results
// are unchanged.
//
// Helpers (HelpUntil): a thread outside the pool that would otherwise wait
// (the training step's thread waiting for its next batch) works for the
// pool meanwhile: it claims chunks of the loops that workers run inside
// their steps, then queued tasks (steps, loop helpers), and sleeps only
// when there is none. Why: with 2 threads the pool's one worker ran every
// pipeline step (sampling, the row gather) while the training step's
// thread sat waiting for batches, so the process kept about 1.6 of its 2
// cores busy (bench/RESULTS.md, issue 19). A worker's loop inside a step
// is opened to helpers (chunks claimed by whoever comes, the worker still
// lending itself between its own chunks), so results are unchanged:
// chunking never depends on which thread runs a chunk. It is opened when
// it starts, whether or not a helper waits then, so that a thread that
// starts to wait while the loop runs joins it at its next chunk: opened
// only to helpers already waiting, the training step's thread, which
// mostly starts to wait for its next batch while the worker is inside that
// batch's row gather (one loop), slept until the gather ended, about a
// fifth of its time in the speed run (bench/RESULTS.md, session 18).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace foresight {

class ThreadPool {
 public:
  // `num_threads` is the total budget including the caller of ParallelFor;
  // num_threads - 1 workers are started. num_threads <= 0 means online CPUs.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Runs fn(chunk, begin, end) for every chunk [k*grain, min(n,(k+1)*grain))
  // and returns when all are done. The calling thread works too. Called from
  // inside a pool task it runs inline (no deadlock, same chunks).
  void ParallelForChunks(int64_t n, int64_t grain,
                         const std::function<void(int64_t chunk, int64_t begin, int64_t end)>& fn);
  // Same without the chunk index.
  void ParallelFor(int64_t n, int64_t grain,
                   const std::function<void(int64_t begin, int64_t end)>& fn);
  static int64_t NumChunks(int64_t n, int64_t grain) {
    return grain <= 0 ? 0 : (n + grain - 1) / grain;
  }

  // Queues `fn` on a worker (a pipeline stage step, an async read). With a
  // budget of 1 thread, the task runs when the owner next waits on a future
  // of this pool via Wait() or inside ParallelFor.
  std::future<void> Submit(std::function<void()> fn);

  // True on a pool worker thread.
  bool InWorker() const;

  // Loop helper tasks run by workers between the chunks of a step's own
  // loops (see "Loops before steps"), since the pool was made.
  int64_t lent_helpers() const { return lent_.load(std::memory_order_relaxed); }

  // Runs the pool's work on the calling thread until ready() is true (see
  // "Helpers"): chunks of the loops workers run inside steps, then queued
  // tasks; with none, it spins briefly, then sleeps until work is queued
  // or Wake() is called. ready() is checked before each task and each
  // chunk, so the caller returns at most one of them after it becomes
  // true. Whoever makes ready() true must call Wake() afterwards.
  // ready() must not call into this pool. Not from a pool worker (a
  // worker already runs whatever is queued).
  void HelpUntil(const std::function<bool()>& ready);
  // Wakes the threads in HelpUntil to check their ready() again.
  void Wake();
  // Work run by HelpUntil's callers since the pool was made: queued tasks,
  // and chunks of workers' step loops.
  int64_t helped_tasks() const { return helped_tasks_.load(std::memory_order_relaxed); }
  int64_t helped_chunks() const { return helped_chunks_.load(std::memory_order_relaxed); }

 private:
  struct Job;
  struct Task {
    std::function<void()> fn;
    bool loop_helper = false;  // a ParallelFor helper (front of the queue)
  };
  void WorkerLoop();
  bool RunOneTask(std::unique_lock<std::mutex>& lock);
  // On a worker between two chunks of an inline loop: runs the loop helpers
  // at the front of the queue, if any (not from inside one of them).
  void LendToLoops();
  // A worker's loop inside a step, opened to HelpUntil's callers.
  void SharedStepLoop(int64_t n, int64_t grain, int64_t chunks,
                      const std::function<void(int64_t, int64_t, int64_t)>& fn);
  // Under mu_: an open step loop with chunks left to claim, or null.
  std::shared_ptr<Job> OpenStepLoop() const;
  // Waits until every chunk of `job` has run (spinning first when spin_).
  void WaitJob(Job& job);

  int num_threads_;
  bool spin_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> tasks_;            // loop helpers first, then steps in order
  std::atomic<int64_t> queued_{0};   // tasks_.size(), readable without mu_
  std::atomic<int64_t> helpers_{0};  // loop helpers in tasks_, readable without mu_
  std::atomic<int64_t> lent_{0};
  std::atomic<bool> stop_{false};
  // Helpers (HelpUntil): they sleep on help_cv_ (under mu_); wake_seq_
  // counts Wake() calls so that a Wake between a helper's ready() check
  // and its sleep is not lost.
  std::condition_variable help_cv_;
  std::vector<std::shared_ptr<Job>> step_loops_;  // open to helpers, under mu_
  std::atomic<int64_t> open_loops_{0};            // step_loops_.size(), readable without mu_
  std::atomic<int> helpers_waiting_{0};           // threads inside HelpUntil
  std::atomic<uint64_t> wake_seq_{0};             // changed under mu_
  std::atomic<int64_t> helped_tasks_{0};
  std::atomic<int64_t> helped_chunks_{0};
};

// The process-wide pool, sized by SetDefaultThreads (default: online CPUs).
ThreadPool* DefaultThreadPool();
// Replaces the default pool; call before any work is running.
void SetDefaultThreads(int num_threads);
int OnlineCpus();

}  // namespace foresight
