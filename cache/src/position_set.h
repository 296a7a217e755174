// PositionSet: a set of positions in one batch's key list (a two-level
// bitset) with O(1)-ish insert, erase and "largest member". The lookahead
// policy keeps, per future batch b, the positions of b's keys that are
// resident, unpinned and next used by b: the eviction candidates whose next
// use is b, ordered by position (the tie-break among equal next uses).
#pragma once

#include <cstdint>
#include <vector>

namespace foresight::cache::internal {

class PositionSet {
 public:
  void Reset(int32_t n) {
    words_.assign((static_cast<size_t>(n) + 63) / 64, 0);
    summary_.assign((words_.size() + 63) / 64, 0);
    count_ = 0;
  }
  void Free() {
    std::vector<uint64_t>().swap(words_);
    std::vector<uint64_t>().swap(summary_);
    count_ = 0;
  }

  int64_t count() const { return count_; }

  void Insert(int32_t i) {
    uint64_t& w = words_[i >> 6];
    const uint64_t bit = 1ull << (i & 63);
    if (w & bit) return;
    w |= bit;
    summary_[i >> 12] |= 1ull << ((i >> 6) & 63);
    ++count_;
  }

  void Erase(int32_t i) {
    uint64_t& w = words_[i >> 6];
    const uint64_t bit = 1ull << (i & 63);
    if (!(w & bit)) return;
    w &= ~bit;
    if (w == 0) summary_[i >> 12] &= ~(1ull << ((i >> 6) & 63));
    --count_;
  }

  // The largest member, or -1 when empty.
  int32_t Last() const {
    if (count_ == 0) return -1;
    for (size_t s = summary_.size(); s-- > 0;) {
      if (summary_[s] == 0) continue;
      const size_t wi = s * 64 + 63 - __builtin_clzll(summary_[s]);
      return static_cast<int32_t>(wi * 64 + 63 - __builtin_clzll(words_[wi]));
    }
    return -1;
  }

 private:
  std::vector<uint64_t> words_;
  std::vector<uint64_t> summary_;  // bit w set <=> words_[w] != 0
  int64_t count_ = 0;
};

}  // namespace foresight::cache::internal
