// BoundedQueue: the link between two pipeline stages. Its capacity bounds
// how many batches sit between the stages, and so the pipeline's memory.
// Both ends wait passively (condition variables). Close() ends the stream
// normally (Pop drains what is left, then reports the end); Cancel() aborts
// it (every blocked Push/Pop returns at once, queued items are dropped).
// A consumer that works elsewhere while it waits (ThreadPool::HelpUntil)
// polls CanPop() and is woken by the queue's on_ready callback.
// Thread-safe. Private to the trainer.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <utility>

namespace foresight::trainer::internal {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  size_t capacity() const { return capacity_; }

  // Called after every Push, Close and Cancel, outside the queue's lock:
  // whatever Pop would no longer block on. Set before the queue is shared.
  void SetOnReady(std::function<void()> on_ready) { on_ready_ = std::move(on_ready); }

  // True when Pop would return at once (an item, the end, or cancelled).
  bool CanPop() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_ || closed_ || !items_.empty();
  }

  // Blocks while full. False when the queue was closed or cancelled (the
  // item is dropped).
  bool Push(T item) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      not_full_.wait(lock, [&] { return cancelled_ || closed_ || items_.size() < capacity_; });
      if (cancelled_ || closed_) return false;
      items_.push_back(std::move(item));
      not_empty_.notify_one();
    }
    Ready();
    return true;
  }

  // Blocks while empty and open. False at the end of the stream (closed and
  // drained) or when cancelled.
  bool Pop(T* out) {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return cancelled_ || closed_ || !items_.empty(); });
    if (cancelled_ || items_.empty()) return false;
    *out = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }

  // No more pushes; consumers drain what is queued.
  void Close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
      not_empty_.notify_all();
      not_full_.notify_all();
    }
    Ready();
  }

  // Aborts both ends and drops the queued items.
  void Cancel() {
    std::deque<T> dropped;
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
      dropped.swap(items_);
      not_empty_.notify_all();
      not_full_.notify_all();
    }
    Ready();
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return items_.size();
  }

 private:
  void Ready() {
    if (on_ready_) on_ready_();
  }

  const size_t capacity_;
  std::function<void()> on_ready_;
  mutable std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<T> items_;
  bool closed_ = false;
  bool cancelled_ = false;
};

}  // namespace foresight::trainer::internal
