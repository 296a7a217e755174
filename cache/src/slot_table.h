// SlotTable: residency of the cache slots. Per slot: the key it holds (or
// none), how many in-flight batches use it (pins), and whether its row was
// written since it was fetched (dirty). Free slots are handed out lowest
// first so plans do not depend on anything but the call sequence.
#pragma once

#include <cstdint>
#include <vector>

#include "foresight/cache/cache_planner.h"

namespace foresight::cache::internal {

class SlotTable {
 public:
  explicit SlotTable(int32_t num_slots);

  int32_t num_slots() const { return static_cast<int32_t>(key_.size()); }
  int64_t num_free() const { return static_cast<int64_t>(free_.size()); }
  int32_t TakeFree() {
    const int32_t s = free_.back();
    free_.pop_back();
    return s;
  }

  int64_t key(int32_t s) const { return key_[s]; }
  bool pinned(int32_t s) const { return pins_[s] > 0; }
  bool dirty(int32_t s) const { return dirty_[s] != 0; }

  // Slot s now holds `key` (clean) with `pins` users.
  void Assign(int32_t s, int64_t key, int32_t pins) {
    key_[s] = key;
    pins_[s] = pins;
    dirty_[s] = 0;
  }
  // Returns true when s was unpinned before (it leaves the evictable set).
  bool Pin(int32_t s) { return pins_[s]++ == 0; }
  // Returns true when s is unpinned now (it joins the evictable set).
  bool Unpin(int32_t s) { return --pins_[s] == 0; }
  void MarkDirty(int32_t s) { dirty_[s] = 1; }
  // Its row was written back but stays resident.
  void MarkClean(int32_t s) { dirty_[s] = 0; }

  // Every dirty slot (in slot order), marked clean.
  std::vector<SlotKey> TakeDirty();

 private:
  std::vector<int64_t> key_;
  std::vector<int32_t> pins_;
  std::vector<uint8_t> dirty_;
  std::vector<int32_t> free_;  // a stack: the lowest free slot on top
};

}  // namespace foresight::cache::internal
