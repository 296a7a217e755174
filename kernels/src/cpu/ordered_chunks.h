// OrderedChunks: runs a sequential, in-order consumer over the chunks of a
// parallel loop while the loop is still running. Each worker reports its
// finished chunk; the consumer runs only on the thread that made the
// OrderedChunks (the loop's caller, which takes chunks too), between its
// own chunks, and there consumes every consecutive finished chunk from the
// cursor on. The consumer thus sees chunks 0, 1, 2, ... exactly once, on one
// thread, and overlaps with the filling of later chunks instead of waiting
// for all of them.
//
// Why one thread: the sampler's consumer updates a hash table of a megabyte
// or two at random. Run on whichever thread finished a chunk, the table's
// lines moved between the two cores' caches with every hand-over (a dirty
// line held by the other core costs a cross-core transfer), and the
// relabelling ran at half the speed it reaches on one core: 0.50 vs 0.33 ms
// per batch on the R-MAT bench graph.
//
// Finish, after the loop, consumes whatever is left, so nothing is ever
// skipped.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

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
  // On the owning thread, also consumes what is ready.
  void Done(int64_t c) {
    done_[c].store(true, std::memory_order_release);
    if (std::this_thread::get_id() == owner_) Drain();
  }

  // Marks chunk c done without consuming anything (a chunk finished before
  // the loop started; the first Done or Finish takes it).
  void Ready(int64_t c) { done_[c].store(true, std::memory_order_release); }

  // On the owning thread, after the parallel loop has returned: consumes
  // the rest; the first error the consumer returned.
  Status Finish() {
    Drain();
    return status_;
  }

 private:
  void Drain() {  // the owning thread only
    while (cursor_ < chunks_ && done_[cursor_].load(std::memory_order_acquire)) {
      if (status_.ok()) status_ = consume_(cursor_);
      ++cursor_;
    }
  }

  const std::thread::id owner_ = std::this_thread::get_id();
  const int64_t chunks_;
  std::unique_ptr<std::atomic<bool>[]> done_;
  Consume consume_;
  int64_t cursor_ = 0;  // owner only
  Status status_;       // owner only
};

}  // namespace foresight::kernels::cpu
