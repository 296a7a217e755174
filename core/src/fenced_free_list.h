// FencedFreeList: the free lists of a caching allocator whose blocks may
// still be read or written by queued device work when they are freed. Each
// freed block carries a fence (for CUDA: an event recorded on every stream
// slot at the free), and is handed out again only once its fence has
// passed, so a block freed while a kernel on one stream still uses it is
// never given to work on another stream (the cache itself knows no
// streams). Blocks whose fence has not passed are skipped, not waited for.
//
// Fence: movable, with `bool Passed()` (may be called repeatedly) and
// `void Release()` (called once, when the block leaves the list). Not
// thread-safe: the allocator holds its lock around every call.
#pragma once

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

namespace foresight::internal {

template <typename Fence>
class FencedFreeList {
 public:
  // Adds a freed block of size class `cls`.
  void Push(size_t cls, void* ptr, Fence fence) { free_[cls].push_back(Entry{ptr, std::move(fence)}); }

  // The most recently freed block of class `cls` whose fence has passed,
  // or null when none has (a newer block's pending fence does not hide an
  // older one's passed fence).
  void* Take(size_t cls) {
    auto it = free_.find(cls);
    if (it == free_.end()) return nullptr;
    std::vector<Entry>& list = it->second;
    for (size_t i = list.size(); i-- > 0;) {
      if (list[i].fence.Passed()) {
        void* p = list[i].ptr;
        list[i].fence.Release();
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        return p;
      }
    }
    return nullptr;
  }

  // Removes every block (the caller first makes sure all device work is
  // done, e.g. by synchronizing the device) and returns them with sizes.
  std::vector<std::pair<void*, size_t>> TakeAll() {
    std::vector<std::pair<void*, size_t>> out;
    for (auto& [cls, list] : free_) {
      for (Entry& e : list) {
        e.fence.Release();
        out.emplace_back(e.ptr, cls);
      }
    }
    free_.clear();
    return out;
  }

  size_t size() const {
    size_t n = 0;
    for (const auto& [cls, list] : free_) n += list.size();
    return n;
  }

 private:
  struct Entry {
    void* ptr;
    Fence fence;
  };
  std::map<size_t, std::vector<Entry>> free_;
};

}  // namespace foresight::internal
