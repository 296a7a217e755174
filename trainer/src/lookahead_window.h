// The lookahead window of a trainer over embedding tables (private to the
// trainer): the batches handed to the tables, which plan their caches over
// them, and not yet trained, in order across the epochs of the run. The
// link trainers (one and several ranks) and SASRec fill theirs alike and
// differ only in what a batch hands to its tables (Fill's `enqueue`).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>

#include "foresight/core/status.h"

namespace foresight::trainer::internal {

// Batch: a batch with `int epoch` and `int64_t index` (within the epoch).
template <typename Batch>
class LookaheadWindow {
 public:
  // Batches of the whole run (epochs * batches per epoch).
  void set_total(int64_t total) { total_ = total; }
  // The next batch made is `next` of the run (at most the total): a
  // restored run starts at the first batch of its next epoch.
  void set_next(int64_t next) { next_ = std::min(next, total_); }

  // Makes batches with `batcher` (batches_per_epoch(), Make(epoch, index))
  // until the window holds the next batch and `lookahead` beyond it, or the
  // run's last batch is made. Each goes through `enqueue(Batch*) -> Status`,
  // which hands it to the tables and may replace it with what the window
  // keeps (a rank's part). Once the last batch is made, calls `close()`
  // (the tables then know that no batch follows), once.
  template <typename Batcher, typename Enqueue, typename Close>
  Status Fill(Batcher& batcher, int lookahead, Enqueue&& enqueue, Close&& close) {
    const int64_t want = static_cast<int64_t>(lookahead) + 1;
    while (static_cast<int64_t>(batches_.size()) < want && next_ < total_) {
      const int epoch = static_cast<int>(next_ / batcher.batches_per_epoch());
      Batch b = batcher.Make(epoch, next_ % batcher.batches_per_epoch());
      FS_RETURN_IF_ERROR(enqueue(&b));
      batches_.push_back(std::move(b));
      ++next_;
    }
    if (next_ == total_ && !closed_) {
      close();
      closed_ = true;
    }
    return Status::OK();
  }

  // Takes the oldest batch out of the window into *out; it must be batch
  // `index` of epoch `epoch`, the one the trainer is about to train.
  Status Take(int epoch, int64_t index, Batch* out) {
    if (batches_.empty() || batches_.front().epoch != epoch || batches_.front().index != index) {
      return Internal("lookahead window out of order: batch " + std::to_string(index) + " of epoch " +
                      std::to_string(epoch) + " is not the next one made");
    }
    *out = std::move(batches_.front());
    batches_.pop_front();
    return Status::OK();
  }

 private:
  std::deque<Batch> batches_;
  int64_t next_ = 0, total_ = 0;
  bool closed_ = false;
};

}  // namespace foresight::trainer::internal
