// SlotList: an intrusive doubly linked list over slot numbers with O(1)
// push-back, removal and front. The LRU policy keeps unpinned resident slots
// in it by recency; the lookahead policy keeps the unpinned rows that have
// no use inside the window in it (oldest first, so beyond the window it
// degrades to LRU).
#pragma once

#include <cstdint>
#include <vector>

namespace foresight::cache::internal {

class SlotList {
 public:
  explicit SlotList(int32_t num_slots) : prev_(num_slots, -1), next_(num_slots, -1) {}

  bool empty() const { return head_ < 0; }
  int64_t size() const { return size_; }
  int32_t front() const { return head_; }
  int32_t next(int32_t s) const { return next_[s]; }

  void PushBack(int32_t s) {
    prev_[s] = tail_;
    next_[s] = -1;
    if (tail_ >= 0) {
      next_[tail_] = s;
    } else {
      head_ = s;
    }
    tail_ = s;
    ++size_;
  }

  void Remove(int32_t s) {
    if (prev_[s] >= 0) {
      next_[prev_[s]] = next_[s];
    } else {
      head_ = next_[s];
    }
    if (next_[s] >= 0) {
      prev_[next_[s]] = prev_[s];
    } else {
      tail_ = prev_[s];
    }
    prev_[s] = next_[s] = -1;
    --size_;
  }

 private:
  std::vector<int32_t> prev_;
  std::vector<int32_t> next_;
  int32_t head_ = -1;
  int32_t tail_ = -1;
  int64_t size_ = 0;
};

}  // namespace foresight::cache::internal
