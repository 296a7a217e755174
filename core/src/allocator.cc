#include "foresight/core/allocator.h"

#include <sys/mman.h>

#include <cstdlib>
#include <string>

#include "cuda_runtime_api.h"
#include "foresight/core/caching_allocator.h"
#include "foresight/core/logging.h"

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

// Allocations of at least one x86-64 PMD page get 2 MiB alignment and
// MADV_HUGEPAGE.
constexpr size_t kHugePage = size_t{2} << 20;

class HostAllocatorImpl final : public Allocator {
 public:
  StatusOr<void*> Allocate(size_t bytes) override {
    const size_t align = bytes >= kHugePage ? kHugePage : bytes >= kPageAlign ? kPageAlign : kHostAlign;
    const size_t rounded = (bytes + align - 1) / align * align;
    void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
    if (p == nullptr) {
      return ResourceExhausted("host allocation of " + std::to_string(bytes) + " bytes failed");
    }
    if (align == kHugePage) {
      // Transparent huge pages where the system leaves them to madvise
      // (the common "madvise" THP setting): random row and neighbour reads
      // over large arrays (CSR, features, activations) then miss the TLB
      // far less. Advice only: failure is harmless.
      (void)::madvise(p, rounded, MADV_HUGEPAGE);
    }
    return p;
  }
  void Deallocate(void* ptr, size_t) override { std::free(ptr); }
  Device device() const override { return Device::Cpu(); }
  MemoryKind kind() const override { return MemoryKind::kHost; }
};

}  // namespace

Allocator* UncachedHostAllocator() {
  static HostAllocatorImpl* a = new HostAllocatorImpl();
  return a;
}

CachingHostAllocator* HostCache() {
  // Never destroyed: tensors in static objects may free blocks during exit.
  static CachingHostAllocator* a = [] {
    size_t limit = kDefaultHostCacheBytes;
    if (const char* e = std::getenv("FORESIGHT_HOST_CACHE_MB")) {
      char* end = nullptr;
      const long long mb = std::strtoll(e, &end, 10);
      if (end != e && *end == '\0' && mb >= 0) {
        limit = static_cast<size_t>(mb) << 20;
      } else {
        FS_LOG(WARNING) << "FORESIGHT_HOST_CACHE_MB=" << e << " is not a count of MiB >= 0; keeping the default "
                        << (kDefaultHostCacheBytes >> 20) << " MiB";
      }
    }
    return new CachingHostAllocator(UncachedHostAllocator(), limit);
  }();
  return a;
}

Allocator* HostAllocator() { return HostCache(); }

StatusOr<Allocator*> PinnedHostAllocator() { return internal::CudaPinnedAllocator(); }

StatusOr<Allocator*> AllocatorFor(Device device) {
  if (device.is_cpu()) return HostAllocator();
  return internal::CudaDeviceAllocator(device.index);
}

}  // namespace foresight
