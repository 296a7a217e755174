// SlotArena: the cache's fast tier, num_slots rows of row_bytes each, where
// the read stage lands fetched rows and the assemble stage reads them. On a
// CPU run it is host RAM (one allocation, faulted in up front); a GPU tier
// implements the same interface over device memory later (the read stage
// then stages through pinned buffers and the assemble stage gathers on the
// device). Slot contents are owned by the cache planner's pinning rules:
// the arena does no locking. Private to the trainer.
#pragma once

#include <cstdint>
#include <memory>

#include "foresight/core/device.h"
#include "foresight/core/status.h"

namespace foresight::trainer::internal {

class SlotArena {
 public:
  virtual ~SlotArena() = default;
  int64_t num_slots() const { return num_slots_; }
  int64_t row_bytes() const { return row_bytes_; }
  virtual Device device() const = 0;
  // Address of slot `slot` (in [0, num_slots())), on device().
  virtual uint8_t* slot(int64_t slot) = 0;
  int64_t bytes() const { return num_slots_ * row_bytes_; }

 protected:
  SlotArena(int64_t num_slots, int64_t row_bytes) : num_slots_(num_slots), row_bytes_(row_bytes) {}

 private:
  int64_t num_slots_;
  int64_t row_bytes_;
};

// Host RAM slots: one allocation of num_slots * row_bytes bytes from the
// host allocator (aligned to 4096 at least, so O_DIRECT reads may target a
// slot whose offset is aligned; huge pages when large), faulted in (zeroed)
// before it returns. ResourceExhausted naming the size when the allocation
// fails.
StatusOr<std::unique_ptr<SlotArena>> HostSlotArena(int64_t num_slots, int64_t row_bytes);

}  // namespace foresight::trainer::internal
