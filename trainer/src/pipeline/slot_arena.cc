#include "slot_arena.h"

#include <cstdlib>
#include <string>

#include "foresight/core/allocator.h"

namespace foresight::trainer::internal {

namespace {

class HostArena : public SlotArena {
 public:
  HostArena(int64_t num_slots, int64_t row_bytes, uint8_t* data)
      : SlotArena(num_slots, row_bytes), data_(data) {}
  ~HostArena() override { std::free(data_); }
  Device device() const override { return Device::Cpu(); }
  uint8_t* slot(int64_t slot) override { return data_ + slot * row_bytes(); }

 private:
  uint8_t* data_;
};

}  // namespace

StatusOr<std::unique_ptr<SlotArena>> HostSlotArena(int64_t num_slots, int64_t row_bytes) {
  if (num_slots < 0 || row_bytes <= 0) {
    return InvalidArgument("cache slots: " + std::to_string(num_slots) + " slots of " +
                           std::to_string(row_bytes) + " bytes is not a valid arena");
  }
  const size_t bytes = static_cast<size_t>(num_slots) * static_cast<size_t>(row_bytes);
  uint8_t* data = nullptr;
  if (bytes > 0) {
    const size_t rounded = (bytes + kPageAlign - 1) / kPageAlign * kPageAlign;
    data = static_cast<uint8_t*>(std::aligned_alloc(kPageAlign, rounded));
    if (data == nullptr) {
      return ResourceExhausted("cache slots: cannot allocate " + std::to_string(bytes) + " bytes (" +
                               std::to_string(num_slots) + " rows of " + std::to_string(row_bytes) +
                               " bytes)");
    }
  }
  return std::unique_ptr<SlotArena>(new HostArena(num_slots, row_bytes, data));
}

}  // namespace foresight::trainer::internal
