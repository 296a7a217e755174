#include "foresight/core/allocator.h"

#include <cstdlib>
#include <string>

#include "cuda_runtime_api.h"

namespace foresight {

const char* MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kPinnedHost: return "pinned-host";
    case MemoryKind::kDevice: return "device";
  }
  return "?";
}

namespace {

class HostAllocatorImpl final : public Allocator {
 public:
  StatusOr<void*> Allocate(size_t bytes) override {
    const size_t align = bytes >= kPageAlign ? kPageAlign : kHostAlign;
    const size_t rounded = (bytes + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
    if (p == nullptr) {
      return ResourceExhausted("host allocation of " + std::to_string(bytes) + " bytes failed");
    }
    return p;
  }
  void Deallocate(void* ptr, size_t) override { std::free(ptr); }
  Device device() const override { return Device::Cpu(); }
  MemoryKind kind() const override { return MemoryKind::kHost; }
};

}  // namespace

Allocator* HostAllocator() {
  static HostAllocatorImpl* a = new HostAllocatorImpl();
  return a;
}

StatusOr<Allocator*> PinnedHostAllocator() { return internal::CudaPinnedAllocator(); }

StatusOr<Allocator*> AllocatorFor(Device device) {
  if (device.is_cpu()) return HostAllocator();
  return internal::CudaDeviceAllocator(device.index);
}

}  // namespace foresight
