// IoWorker: one background thread that runs an embedding table's store I/O
// (write-backs, fetches, bypass reads and writes) in the order it was
// posted, so the I/O of the next batch overlaps the current batch's
// compute. The store is then used from this thread only, as RowStore
// requires (one thread at a time).
//
// Errors: a job's failure is kept and returned by every later Wait; the
// jobs after it are skipped (the table is unusable after an I/O error).
//
// Thread safety: Post and Wait from one owner thread; jobs run on the
// worker.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "foresight/core/status.h"

namespace foresight::embed::internal {

class IoWorker {
 public:
  IoWorker();
  // Waits for the posted jobs, then stops the thread.
  ~IoWorker();
  IoWorker(const IoWorker&) = delete;
  IoWorker& operator=(const IoWorker&) = delete;

  // Queues `job`; returns its ticket (increasing from 1).
  int64_t Post(std::function<Status()> job);
  // Blocks until every job up to `ticket` ran; the first error of any job
  // so far, else OK.
  Status Wait(int64_t ticket);
  // Wait for every job posted.
  Status Drain() { return Wait(posted_); }

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable work_, done_;
  std::deque<std::function<Status()>> jobs_;
  int64_t posted_ = 0;     // owner thread only
  int64_t completed_ = 0;  // guarded by mu_
  Status error_;           // guarded by mu_
  bool stop_ = false;      // guarded by mu_
  std::thread thread_;
};

}  // namespace foresight::embed::internal
