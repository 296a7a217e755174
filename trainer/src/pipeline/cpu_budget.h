// CpuBudget: how the pipeline's stage threads stay inside the process's one
// CPU budget (--threads = N, the ThreadPool's size).
//
// The choice: CPU-heavy stage steps (sampling, planning, assembling, copies
// out of an in-memory or mmap'd store) run as *pool tasks*. A stage thread
// hands its step to the pool and waits passively on the result, so the
// step occupies one of the pool's N-1 workers and parallel loops inside it
// run inline on that worker (ThreadPool runs nested loops inline; between
// their chunks the worker first helps the compute thread's waiting loops,
// thread_pool.h "Loops before steps", so a step does not take compute's
// second thread for its whole length). The compute stage is the calling
// thread, the pool's N-th thread. Hence at most N threads compute at any
// moment, whatever the number of stages, and
// results stay bit-identical (loop chunking never depends on who runs it).
// While the compute thread waits for a batch it runs queued steps and
// chunks of the steps' loops itself (ThreadPool::HelpUntil, from
// FeaturePipeline::Next), so its core does not idle while the workers
// sample and gather.
// Stage threads themselves only wait (queues, futures, io_uring
// completions). With N == 1 the pool has no workers: steps then run on the
// stage thread under a mutex that the compute thread also holds while it
// computes, so the two take turns on the one CPU.
//
// Thread-safe. Private to the trainer.
#pragma once

#include <functional>
#include <mutex>

#include "foresight/core/status.h"
#include "foresight/core/thread_pool.h"

namespace foresight::trainer::internal {

class CpuBudget {
 public:
  explicit CpuBudget(ThreadPool* pool) : pool_(pool) {}

  // Runs `step` within the budget and returns its status; blocks passively.
  Status Run(const std::function<Status()>& step);

  // Held by the compute thread while it computes. Locks only when the
  // budget is one thread (otherwise the returned lock owns nothing).
  std::unique_lock<std::mutex> ComputeTurn();

  ThreadPool* pool() const { return pool_; }

 private:
  bool single() const { return pool_->num_threads() <= 1; }
  ThreadPool* pool_;
  std::mutex single_mu_;  // the one CPU, when N == 1
};

}  // namespace foresight::trainer::internal
