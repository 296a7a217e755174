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
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
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

 private:
  struct Job;
  void WorkerLoop();
  bool RunOneTask(std::unique_lock<std::mutex>& lock);

  int num_threads_;
  bool spin_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::atomic<int64_t> queued_{0};  // tasks_.size(), readable without mu_
  std::atomic<bool> stop_{false};
};

// The process-wide pool, sized by SetDefaultThreads (default: online CPUs).
ThreadPool* DefaultThreadPool();
// Replaces the default pool; call before any work is running.
void SetDefaultThreads(int num_threads);
int OnlineCpus();

}  // namespace foresight
