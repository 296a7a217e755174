#include "foresight/core/caching_allocator.h"

#include "foresight/core/logging.h"

namespace foresight {

CachingHostAllocator::CachingHostAllocator(Allocator* backing, size_t limit_bytes, uint64_t max_idle_ops)
    : backing_(backing), limit_bytes_(limit_bytes), max_idle_ops_(max_idle_ops) {
  stats_.limit_bytes = limit_bytes;
}

CachingHostAllocator::~CachingHostAllocator() { Trim(); }

size_t CachingHostAllocator::SizeClass(size_t bytes) {
  if (bytes < kMinCachedBytes) return bytes;
  // p: the largest power of two below `bytes`; classes split (p, 2p] in
  // four steps of p / 4 (a multiple of 1 KiB, so every class keeps the
  // backing allocator's 64-byte alignment).
  const size_t p = size_t{1} << (63 - __builtin_clzll(static_cast<unsigned long long>(bytes - 1)));
  const size_t step = p / 4;
  return (bytes + step - 1) / step * step;
}

StatusOr<void*> CachingHostAllocator::Allocate(size_t bytes) {
  const size_t cls = SizeClass(bytes);
  if (bytes < kMinCachedBytes) return backing_->Allocate(bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++ops_;
    EvictIdleLocked();
    const size_t max_cls = static_cast<size_t>(static_cast<double>(cls) * kMaxReuseFactor);
    for (auto it = free_.lower_bound(cls); it != free_.end() && it->first <= max_cls; ++it) {
      if (it->second.empty()) continue;
      const Cached c = it->second.back();
      it->second.pop_back();
      by_age_.erase(c.stamp);
      stats_.cached_bytes -= it->first;
      --stats_.cached_blocks;
      live_[c.ptr] = it->first;
      stats_.live_bytes += it->first;
      ++stats_.live_blocks;
      ++stats_.hits;
      return c.ptr;
    }
    ++stats_.misses;
    ReleaseForMissLocked(cls);
  }
  StatusOr<void*> p = backing_->Allocate(cls);
  if (!p.ok()) {
    // Cached blocks of other classes may be what the system is short of.
    if (Trim() == 0) return p;
    p = backing_->Allocate(cls);
    if (!p.ok()) return p;
  }
  std::lock_guard<std::mutex> lock(mu_);
  live_[*p] = cls;
  stats_.live_bytes += cls;
  ++stats_.live_blocks;
  return p;
}

void CachingHostAllocator::Deallocate(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  if (bytes < kMinCachedBytes) {
    backing_->Deallocate(ptr, bytes);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  if (it == live_.end()) {
    FS_LOG(ERROR) << "CachingHostAllocator: Deallocate of " << ptr << " (" << bytes
                  << " bytes), which is not a live block of this allocator (freed twice?): ignored";
    return;
  }
  const size_t cls = it->second;
  live_.erase(it);
  const uint64_t stamp = ++ops_;
  EvictIdleLocked();
  stats_.live_bytes -= cls;
  --stats_.live_blocks;
  if (cls > limit_bytes_) {
    ReleaseLocked(ptr, cls);
    return;
  }
  EvictLocked(limit_bytes_ - cls);
  free_[cls].push_back(Cached{ptr, stamp});
  by_age_.emplace(stamp, std::make_pair(ptr, cls));
  stats_.cached_bytes += cls;
  ++stats_.cached_blocks;
}

void CachingHostAllocator::ReleaseForMissLocked(size_t cls) {
  size_t released = 0;
  // First the classes just below: most likely the same tensor's previous,
  // slightly smaller shape, which the grown one has replaced.
  for (auto it = free_.lower_bound(cls / 2); it != free_.end() && it->first < cls && released < cls; ++it) {
    std::vector<Cached>& list = it->second;
    while (!list.empty() && released < cls) {
      const Cached c = list.front();  // the class's oldest
      list.erase(list.begin());
      by_age_.erase(c.stamp);
      stats_.cached_bytes -= it->first;
      --stats_.cached_blocks;
      ++stats_.miss_releases;
      released += it->first;
      ReleaseLocked(c.ptr, it->first);
    }
  }
  // Then blocks idle for longer than a step: a step's own blocks (freed
  // in the previous step) are about to be asked for again, and releasing
  // them would only move the miss to them.
  while (released < cls && !by_age_.empty() && ops_ - by_age_.begin()->first > kMissReleaseMinIdleOps) {
    released += ReleaseOldestLocked();
    ++stats_.miss_releases;
  }
}

size_t CachingHostAllocator::ReleaseOldestLocked() {
  auto oldest = by_age_.begin();
  const uint64_t stamp = oldest->first;
  void* ptr = oldest->second.first;
  const size_t cls = oldest->second.second;
  by_age_.erase(oldest);
  // The oldest block of a class sits near the front of its list.
  std::vector<Cached>& list = free_[cls];
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].stamp == stamp) {
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  stats_.cached_bytes -= cls;
  --stats_.cached_blocks;
  ReleaseLocked(ptr, cls);
  return cls;
}

void CachingHostAllocator::EvictLocked(size_t target_bytes) {
  while (stats_.cached_bytes > target_bytes && !by_age_.empty()) {
    ReleaseOldestLocked();
    ++stats_.evictions;
  }
}

void CachingHostAllocator::EvictIdleLocked() {
  while (!by_age_.empty() && ops_ - by_age_.begin()->first > max_idle_ops_) {
    ReleaseOldestLocked();
    ++stats_.idle_releases;
  }
}

void CachingHostAllocator::ReleaseLocked(void* ptr, size_t cls) { backing_->Deallocate(ptr, cls); }

size_t CachingHostAllocator::Trim() {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t released = stats_.cached_bytes;
  for (auto& [cls, list] : free_) {
    for (const Cached& c : list) ReleaseLocked(c.ptr, cls);
  }
  free_.clear();
  by_age_.clear();
  stats_.cached_bytes = 0;
  stats_.cached_blocks = 0;
  return released;
}

void CachingHostAllocator::SetLimit(size_t limit_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  limit_bytes_ = limit_bytes;
  stats_.limit_bytes = limit_bytes;
  EvictLocked(limit_bytes);
}

CachingAllocatorStats CachingHostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace foresight
