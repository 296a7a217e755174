// CachingHostAllocator: keeps freed host blocks by size class and hands them
// out again, so a training step's activations, gradients and masks land in
// memory that is already mapped. A fresh multi-megabyte block costs a page
// fault (and, under THP, a 2 MiB zeroing) per page on first touch; in the
// speed run that cost more than the dropout kernel's own memory traffic.
//
// Blocks below kMinCachedBytes go straight to the backing allocator (glibc's
// bins already reuse small blocks without faults). Larger requests round up
// to a size class (four classes per power of two, so at most 25% of virtual
// size is slack; the untouched tail of a block is never faulted in) and are
// served from that class's free list, else from the next classes up to
// kMaxReuseFactor times the class, else from the backing allocator.
//
// Resident memory: cached blocks count in the process's RSS, so the cache
// must not add to the peak. A miss first releases at least as many cached
// bytes as it asks for, taken from the classes just below it (likely the
// same tensor's previous, smaller shape) and then from blocks idle longer
// than a step; live + cached bytes thus pass their earlier peak only when
// the cache holds nothing stale, and the peak stays what it would be
// without the cache while each step still reuses the step before's blocks.
// A block no request took within max_idle_ops later cacheable operations
// (allocations and frees) is released as well, and the cache is bounded:
// a freed block larger than the limit goes straight back, and freeing past
// the limit releases the least recently cached blocks first. Trim()
// releases everything cached (e.g. before a memory-hungry evaluation).
//
// Thread-safe (one mutex: a step allocates tens of blocks, never per
// element).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "foresight/core/allocator.h"

namespace foresight {

struct CachingAllocatorStats {
  size_t cached_bytes = 0;      // class bytes held in the free lists
  size_t cached_blocks = 0;
  size_t live_bytes = 0;        // class bytes of blocks handed out, not yet freed
  size_t live_blocks = 0;
  size_t limit_bytes = 0;
  uint64_t hits = 0;            // requests served from the cache
  uint64_t misses = 0;          // cacheable requests that went to the backing allocator
  uint64_t evictions = 0;       // cached blocks released to stay under the limit
  uint64_t idle_releases = 0;   // cached blocks released after idling max_idle_ops
  uint64_t miss_releases = 0;   // cached blocks released to make room for a miss
};

class CachingHostAllocator final : public Allocator {
 public:
  // Requests below this many bytes bypass the cache.
  static constexpr size_t kMinCachedBytes = 4096;
  // A request may take a cached block of up to this factor times its class.
  static constexpr double kMaxReuseFactor = 1.5;

  // `backing` (not owned) must outlive this allocator; its blocks are
  // released through it, with the class size as the byte count.
  // Default idle bound: a few training steps' worth of operations (a
  // GraphSAGE step makes about 75 cacheable allocations and as many frees).
  static constexpr uint64_t kDefaultMaxIdleOps = 1024;
  // A miss may release other classes' blocks idle longer than this.
  static constexpr uint64_t kMissReleaseMinIdleOps = 256;

  CachingHostAllocator(Allocator* backing, size_t limit_bytes, uint64_t max_idle_ops = kDefaultMaxIdleOps);
  ~CachingHostAllocator() override;  // releases the cached blocks
  CachingHostAllocator(const CachingHostAllocator&) = delete;
  CachingHostAllocator& operator=(const CachingHostAllocator&) = delete;

  StatusOr<void*> Allocate(size_t bytes) override;
  // `ptr` must be live from this allocator (a pointer it never handed out,
  // or one freed twice, is logged and ignored rather than cached).
  void Deallocate(void* ptr, size_t bytes) override;
  Device device() const override { return backing_->device(); }
  MemoryKind kind() const override { return backing_->kind(); }

  // Releases every cached block; returns the bytes released.
  size_t Trim();
  // New bound on cached bytes (releases the oldest blocks beyond it).
  void SetLimit(size_t limit_bytes);
  CachingAllocatorStats stats() const;

  // The class a request of `bytes` rounds up to (`bytes` itself below
  // kMinCachedBytes).
  static size_t SizeClass(size_t bytes);

 private:
  struct Cached {
    void* ptr;
    uint64_t stamp;
  };
  void EvictLocked(size_t target_bytes);            // until cached_bytes_ <= target
  void EvictIdleLocked();                           // blocks idle > max_idle_ops_
  size_t ReleaseOldestLocked();                     // returns its class bytes
  // Before a miss of class `cls` goes to the backing allocator: releases
  // at least `cls` cached bytes (as many as there are), so that a miss
  // never grows live + cached bytes while the cache holds anything.
  void ReleaseForMissLocked(size_t cls);
  void ReleaseLocked(void* ptr, size_t cls);        // to the backing allocator

  Allocator* const backing_;
  mutable std::mutex mu_;
  size_t limit_bytes_;
  const uint64_t max_idle_ops_;
  // Class size -> free blocks (back = most recently freed).
  std::map<size_t, std::vector<Cached>> free_;
  // Age order for eviction: stamp -> (ptr, class).
  std::map<uint64_t, std::pair<void*, size_t>> by_age_;
  // Live cacheable blocks -> class size (a block may serve a smaller class).
  std::unordered_map<void*, size_t> live_;
  uint64_t ops_ = 0;  // cacheable allocations + frees so far; stamps cached blocks
  CachingAllocatorStats stats_;
};

}  // namespace foresight
