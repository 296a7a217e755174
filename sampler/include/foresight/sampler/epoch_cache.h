// EpochCache: the per-epoch state of a batch order (its permutation, its
// batch table) for the two most recent epochs, so that the trainer and a
// lookahead stage crossing an epoch boundary do not recompute it. Shared by
// the orders in this module; not meant for other use.
#pragma once

#include <cstdint>
#include <mutex>
#include <utility>

namespace foresight::sampler::internal {

// T is cheap to copy (a Tensor, a shared_ptr): Get hands out copies, so a
// value evicted from the cache stays alive for whoever still holds it.
template <typename T>
class EpochCache {
 public:
  // The value of `epoch`, computed with make(epoch) on a miss. The lock is
  // held while computing, so concurrent callers asking for the same epoch
  // compute it once.
  template <typename Make>
  T Get(int64_t epoch, const Make& make) {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < 2; ++i) {
      if (entries_[i].valid && entries_[i].epoch == epoch) {
        if (i == 1) std::swap(entries_[0], entries_[1]);
        return entries_[0].value;
      }
    }
    T value = make(epoch);
    entries_[1] = std::move(entries_[0]);
    entries_[0] = Entry{epoch, true, value};
    return value;
  }

 private:
  struct Entry {
    int64_t epoch = -1;
    bool valid = false;
    T value{};
  };
  std::mutex mu_;
  Entry entries_[2];  // most recent first
};

}  // namespace foresight::sampler::internal
