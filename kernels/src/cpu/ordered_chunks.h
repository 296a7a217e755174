// OrderedChunks: runs a sequential, in-order consumer over the chunks of a
// parallel loop while the loop is still running. Each worker reports its
// finished chunk; whichever thread finds the consumer free then consumes
// every consecutive finished chunk from the cursor on. The consumer thus
// sees chunks 0, 1, 2, ... exactly once, never concurrently, and overlaps
// with the filling of later chunks instead of waiting for all of them.
//
// A chunk finished while another thread is consuming may be left for the
// next report (the consumer had already looked past it); Finish, after the
// loop, consumes whatever is left, so nothing is ever skipped.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "foresight/core/status.h"

namespace foresight::kernels::cpu {

class OrderedChunks {
 public:
  using Consume = std::function<Status(int64_t chunk)>;
  OrderedChunks(int64_t chunks, Consume consume)
      : chunks_(chunks), done_(new std::atomic<bool>[static_cast<size_t>(chunks > 0 ? chunks : 1)]),
        consume_(std::move(consume)) {
    for (int64_t c = 0; c < chunks_; ++c) done_[c].store(false, std::memory_order_relaxed);
  }

  // Called by the thread that finished chunk c (its writes happen before).
  void Done(int64_t c) {
    done_[c].store(true, std::memory_order_release);
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    if (lock.owns_lock()) Drain();
  }

  // After the parallel loop has returned: consumes the rest; the first
  // error the consumer returned.
  Status Finish() {
    std::lock_guard<std::mutex> lock(mu_);
    Drain();
    return status_;
  }

 private:
  void Drain() {  // mu_ held
    while (cursor_ < chunks_ && done_[cursor_].load(std::memory_order_acquire)) {
      if (status_.ok()) status_ = consume_(cursor_);
      ++cursor_;
    }
  }

  const int64_t chunks_;
  std::unique_ptr<std::atomic<bool>[]> done_;
  Consume consume_;
  std::mutex mu_;
  int64_t cursor_ = 0;  // guarded by mu_
  Status status_;       // guarded by mu_
};

}  // namespace foresight::kernels::cpu
