// Allocators: where tensor bytes come from. Host memory is 64-byte aligned
// (AVX-512 rows) and large blocks are 4096-byte aligned (O_DIRECT buffers);
// pinned host memory is its own kind so H2D copies can be asynchronous.
#pragma once

#include <cstddef>

#include "foresight/core/device.h"
#include "foresight/core/status.h"

namespace foresight {

enum class MemoryKind { kHost, kPinnedHost, kDevice };
const char* MemoryKindName(MemoryKind kind);

// Thread-safe. Deallocate must get the pointer and size Allocate returned.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual StatusOr<void*> Allocate(size_t bytes) = 0;
  virtual void Deallocate(void* ptr, size_t bytes) = 0;
  virtual Device device() const = 0;
  virtual MemoryKind kind() const = 0;
};

// Ordinary host memory. Never null.
Allocator* HostAllocator();
// Page-locked host memory registered with the CUDA driver. Unimplemented
// (with a message) in a build without CUDA or on a machine without a GPU.
StatusOr<Allocator*> PinnedHostAllocator();
// Device memory on `device` (a caching allocator on CUDA).
StatusOr<Allocator*> AllocatorFor(Device device);

// Alignment of every host allocation, and of those >= kPageAlign bytes.
constexpr size_t kHostAlign = 64;
constexpr size_t kPageAlign = 4096;

}  // namespace foresight
