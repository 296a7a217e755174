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

// Ordinary host memory, through a process-wide CachingHostAllocator
// (caching_allocator.h) bounded by kDefaultHostCacheBytes: every
// Tensor::Empty / EmptyOn(cpu) uses it, so freed activations and gradients
// are reused by the next step instead of being faulted in again. Never null.
Allocator* HostAllocator();
// The same host memory without the cache (each block comes from and goes
// back to the C library). Never null.
Allocator* UncachedHostAllocator();
class CachingHostAllocator;
// HostAllocator()'s cache, for Trim / SetLimit / stats.
CachingHostAllocator* HostCache();
// Default bound on the bytes HostAllocator() keeps cached: a 1M-node
// speed run's step (about 75 blocks, 150 MB live at batch 1024 and fanouts
// 15,10) is served from the cache, while a block larger than the bound (a
// dataset loaded into RAM, a whole evaluation layer) goes back when freed,
// and blocks no step asks for again are released (see CachingHostAllocator
// for how the cache keeps the peak resident memory). The environment
// variable FORESIGHT_HOST_CACHE_MB, read once at the first allocation,
// overrides it (0 = no caching: every block goes back when freed).
constexpr size_t kDefaultHostCacheBytes = size_t{256} << 20;
// Page-locked host memory registered with the CUDA driver. Unimplemented
// (with a message) in a build without CUDA or on a machine without a GPU.
StatusOr<Allocator*> PinnedHostAllocator();
// Device memory on `device` (a caching allocator on CUDA).
StatusOr<Allocator*> AllocatorFor(Device device);

// Alignment of every host allocation, and of those >= kPageAlign bytes.
constexpr size_t kHostAlign = 64;
constexpr size_t kPageAlign = 4096;

}  // namespace foresight
