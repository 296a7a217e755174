// SlotList: intrusive doubly linked lists over slot numbers with O(1)
// push-back, removal and front; a slot is in at most one of them. The LRU
// policy keeps unpinned resident slots in one list by recency; the
// lookahead policy keeps the unpinned rows that have no use inside the
// window in two (clean and dirty, each oldest first, so beyond the window
// it degrades to LRU within each).
#pragma once

#include <cstdint>
#include <vector>

namespace foresight::cache::internal {

class SlotList {
 public:
  explicit SlotList(int32_t num_slots, int lists = 1)
      : prev_(num_slots, -1), next_(num_slots, -1), list_(lists > 1 ? num_slots : 0, 0), ends_(lists) {}

  bool empty(int l = 0) const { return ends_[l].head < 0; }
  int64_t size(int l = 0) const { return ends_[l].size; }
  int32_t front(int l = 0) const { return ends_[l].head; }
  int32_t next(int32_t s) const { return next_[s]; }
  // The list `s` is in (it must be in one).
  int list_of(int32_t s) const { return list_.empty() ? 0 : list_[s]; }

  void PushBack(int32_t s, int l = 0) {
    Ends& e = ends_[l];
    prev_[s] = e.tail;
    next_[s] = -1;
    if (e.tail >= 0) {
      next_[e.tail] = s;
    } else {
      e.head = s;
    }
    e.tail = s;
    ++e.size;
    if (!list_.empty()) list_[s] = static_cast<uint8_t>(l);
  }

  void Remove(int32_t s) {
    Ends& e = ends_[list_of(s)];
    if (prev_[s] >= 0) {
      next_[prev_[s]] = next_[s];
    } else {
      e.head = next_[s];
    }
    if (next_[s] >= 0) {
      prev_[next_[s]] = prev_[s];
    } else {
      e.tail = prev_[s];
    }
    prev_[s] = next_[s] = -1;
    --e.size;
  }

 private:
  struct Ends {
    int32_t head = -1;
    int32_t tail = -1;
    int64_t size = 0;
  };
  std::vector<int32_t> prev_;
  std::vector<int32_t> next_;
  std::vector<uint8_t> list_;  // with several lists: each slot's
  std::vector<Ends> ends_;
};

}  // namespace foresight::cache::internal
