#include "slot_arena.h"

#include <cstring>
#include <string>

#include "foresight/core/allocator.h"

namespace foresight::trainer::internal {

namespace {

class HostArena : public SlotArena {
 public:
  HostArena(int64_t num_slots, int64_t row_bytes, uint8_t* data, size_t bytes)
      : SlotArena(num_slots, row_bytes), data_(data), bytes_(bytes) {}
  ~HostArena() override {
    if (data_ != nullptr) UncachedHostAllocator()->Deallocate(data_, bytes_);
  }
  Device device() const override { return Device::Cpu(); }
  uint8_t* slot(int64_t slot) override { return data_ + slot * row_bytes(); }

 private:
  uint8_t* data_;
  size_t bytes_;
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
    // The host allocator aligns a large block to 2 MiB and asks for huge
    // pages (4096 at least: O_DIRECT).
    StatusOr<void*> p = UncachedHostAllocator()->Allocate(bytes);
    if (!p.ok()) {
      return ResourceExhausted("cache slots: cannot allocate " + std::to_string(bytes) + " bytes (" +
                               std::to_string(num_slots) + " rows of " + std::to_string(row_bytes) +
                               " bytes)");
    }
    data = static_cast<uint8_t*>(*p);
    // Faulted in now, before the first batch, as the mapped topology is
    // (feature_pipeline.cc): the cache fills during the first epoch, and
    // each first touch of a slot's page cost a fault on the read and
    // assemble stages' turn (a tenth of their samples in the first forty
    // batches on the community graph). The memory plan counts the whole
    // cache from the start already.
    std::memset(data, 0, bytes);
  }
  return std::unique_ptr<SlotArena>(new HostArena(num_slots, row_bytes, data, bytes));
}

}  // namespace foresight::trainer::internal
