// A seeded pseudo-random permutation of [0, n) evaluated per element in O(1)
// memory (private to foresight_datasets): generators use it to spread hot
// ids over the id range.
#pragma once

#include <algorithm>
#include <cstdint>

#include "foresight/core/rng.h"

namespace foresight::datasets::internal {

inline int CeilLog2(int64_t n) {
  int k = 0;
  while ((int64_t{1} << k) < n) ++k;
  return k;
}

// A pseudo-random permutation of [0, n): a 4-round Feistel network over
// 2^(2h) >= n with cycle walking (expected < 4 steps since 2^(2h) < 4n).
class FeistelPermutation {
 public:
  FeistelPermutation(int64_t n, uint64_t key) : n_(n), key_(key) {
    half_ = std::max(1, (CeilLog2(std::max<int64_t>(n, 2)) + 1) / 2);
    mask_ = (uint64_t{1} << half_) - 1;
  }
  int64_t operator()(int64_t x) const {
    uint64_t v = static_cast<uint64_t>(x);
    do {
      uint64_t l = v >> half_, r = v & mask_;
      for (uint64_t round = 0; round < 4; ++round) {
        const uint64_t f = Mix64(key_ ^ (round << 56) ^ r) & mask_;
        const uint64_t nl = r;
        r = l ^ f;
        l = nl;
      }
      v = (l << half_) | r;
    } while (v >= static_cast<uint64_t>(n_));
    return static_cast<int64_t>(v);
  }
  // The x with (*this)(x) == y: the rounds undone in reverse order, with
  // the same cycle walking (y's predecessors outside [0, n) are skipped).
  int64_t Inverse(int64_t y) const {
    uint64_t v = static_cast<uint64_t>(y);
    do {
      uint64_t l = v >> half_, r = v & mask_;
      for (uint64_t round = 4; round-- > 0;) {
        const uint64_t f = Mix64(key_ ^ (round << 56) ^ l) & mask_;
        const uint64_t pr = l;
        l = r ^ f;
        r = pr;
      }
      v = (l << half_) | r;
    } while (v >= static_cast<uint64_t>(n_));
    return static_cast<int64_t>(v);
  }

 private:
  int64_t n_;
  uint64_t key_;
  int half_;
  uint64_t mask_;
};

}  // namespace foresight::datasets::internal
