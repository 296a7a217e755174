#include "slot_table.h"

namespace foresight::cache::internal {

SlotTable::SlotTable(int32_t num_slots)
    : key_(num_slots, -1), pins_(num_slots, 0), dirty_(num_slots, 0) {
  free_.reserve(num_slots);
  for (int32_t s = num_slots; s-- > 0;) free_.push_back(s);
}

std::vector<SlotKey> SlotTable::TakeDirty() {
  std::vector<SlotKey> out;
  for (int32_t s = 0; s < num_slots(); ++s) {
    if (!dirty_[s]) continue;
    out.push_back(SlotKey{key_[s], s});
    dirty_[s] = 0;
  }
  return out;
}

}  // namespace foresight::cache::internal
