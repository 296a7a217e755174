// Floyd's algorithm for neighbour sampling (sample_neighbors.cc): k
// distinct positions of [0, n) for node s, draw j (j = 0..k-1) picking
// t = key.PairedBelow(n-k+j+1, s, j) and taking t, or n-k+j when t was
// already taken. Every k-subset is equally likely and the cost is O(k),
// never O(n). The draws' random words do not depend on the taken set
// (draw j always picks from [0, n - k + j]), so they are computed first,
// many per vector Philox step; what is left per draw is a membership test
// against the draws before it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "floyd_avx512.h"
#include "foresight/core/rng.h"
#include "philox_avx512.h"
#include "philox_simd.h"

namespace foresight::kernels::cpu {

// Positions already taken for the current seed: open addressing over a
// power-of-two table of at least 2k slots, reused across the seeds of a
// chunk (cleared per seed in O(k)).
class TakenSet {
 public:
  void Reset(int64_t k) {
    size_t cap = 16;
    while (cap < static_cast<size_t>(2 * k)) cap <<= 1;
    if (slots_.size() < cap) slots_.resize(cap);
    mask_ = cap - 1;
    std::fill(slots_.begin(), slots_.begin() + cap, int64_t{-1});
  }
  // Inserts `pos`; returns false if it was already present.
  bool Insert(int64_t pos) {
    size_t h = static_cast<size_t>((static_cast<uint64_t>(pos) * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
    for (;;) {
      const int64_t v = slots_[h];
      if (v == pos) return false;
      if (v < 0) {
        slots_[h] = pos;
        return true;
      }
      h = (h + 1) & mask_;
    }
  }

 private:
  std::vector<int64_t> slots_;
  size_t mask_ = 0;
};

// Without AVX-512, fanouts up to kSmallK (the usual 10-15 draws per node)
// take a set of taken positions that is just the draws so far, held in
// four AVX2 registers padded with -1: membership is four compares, and
// draw j enters lane j by a blend, with no hashing, no table to clear per
// seed and no round trip through memory (a 64-bit store followed by a
// 256-bit load of the same bytes cannot be store-forwarded and stalls every
// draw). The same set as TakenSet, so the same draws.
constexpr int64_t kSmallK = 16;

#if defined(__AVX2__)
class Taken16 {
 public:
  Taken16() : s_{Ones(), Ones(), Ones(), Ones()} {}
  bool Contains(int64_t t) const {
    const __m256i v = _mm256_set1_epi64x(t);
    const __m256i any = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi64(s_[0], v), _mm256_cmpeq_epi64(s_[1], v)),
                                        _mm256_or_si256(_mm256_cmpeq_epi64(s_[2], v), _mm256_cmpeq_epi64(s_[3], v)));
    return !_mm256_testz_si256(any, any);
  }
  // Puts t in lane j (each lane is written once, in order).
  void Set(int64_t j, int64_t t) {
    const __m256i v = _mm256_set1_epi64x(t);
    const __m256i jj = _mm256_set1_epi64x(j);
    for (int r = 0; r < 4; ++r) {
      const __m256i lanes = _mm256_setr_epi64x(4 * r, 4 * r + 1, 4 * r + 2, 4 * r + 3);
      s_[r] = _mm256_blendv_epi8(s_[r], v, _mm256_cmpeq_epi64(lanes, jj));
    }
  }

 private:
  static __m256i Ones() { return _mm256_set1_epi64x(-1); }
  __m256i s_[4];
};
#else
class Taken16 {
 public:
  bool Contains(int64_t t) const {
    bool found = false;
    for (int64_t i = 0; i < kSmallK; ++i) found |= s_[i] == t;
    return found;
  }
  void Set(int64_t j, int64_t t) { s_[j] = t; }

 private:
  int64_t s_[kSmallK] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
};
#endif

// The Philox words of draws first .. first + n - 1 of a node
// (PhiloxDrawsXY's contract).
using DrawWords = void (*)(RngKey, uint64_t, uint64_t, int64_t, uint32_t*, uint32_t*);
// All k <= kSmallK positions of a node over n <= kSmallFloydMaxN in one
// call (FloydSmallAvx512).
using SmallFloyd = void (*)(RngKey, uint64_t, int64_t, int64_t, int64_t*);
constexpr int64_t kSmallFloydMaxN = (int64_t{1} << 32) - 1;

// The draw paths an op uses, chosen once per call.
struct FloydFns {
  DrawWords words;
  SmallFloyd small;  // null: small draws take `words` and Taken16
};

// Without AVX-512: AVX2 (or scalar) words and the Taken16 loop.
inline FloydFns PortableFloydFns() { return FloydFns{PhiloxDrawsXY, nullptr}; }

// AVX-512 where the CPU has it: the same positions, fewer instructions.
inline FloydFns ChooseFloydFns() {
#if defined(FS_HAVE_AVX512_PHILOX)
  if (HaveAvx512()) return FloydFns{PhiloxDrawsXYAvx512, FloydSmallAvx512};
#endif
  return PortableFloydFns();
}

// Floyd's draw of k distinct positions of [0, n) for node s (the rule
// above), writing the position of draw j to dst[j]: in one call on the
// CPU's small-draw path where there is one and k and n fit it, else from
// Philox words made sixteen or thirty-two draws per vector step.
inline void FloydPositions(RngKey key, uint64_t s, int64_t k, int64_t n, TakenSet* taken, int64_t* dst,
                           const FloydFns& fns) {
  if (k <= kSmallK && fns.small != nullptr && n <= kSmallFloydMaxN) {
    fns.small(key, s, k, n, dst);
    return;
  }
  const DrawWords draw_words = fns.words;
  const int64_t base = n - k;
  constexpr int64_t kBlock = 64;  // draws per batch of words (a multiple of kPhiloxDrawsPerStep)
  alignas(32) uint32_t wx[kBlock], wy[kBlock];
  if (k <= kSmallK) {
    Taken16 small;
    draw_words(key, s, 0, k, wx, wy);
    for (int64_t j = 0; j < k; ++j) {
      const int64_t m = base + j;  // draw from [0, m]
      int64_t t = static_cast<int64_t>(BelowFromXY(wx[j], wy[j], static_cast<uint64_t>(m + 1)));
      if (small.Contains(t)) t = m;  // m is new: earlier draws were all < m
      small.Set(j, t);
      dst[j] = t;
    }
    return;
  }
  taken->Reset(k);
  for (int64_t j0 = 0; j0 < k; j0 += kBlock) {
    const int64_t cnt = k - j0 < kBlock ? k - j0 : kBlock;
    draw_words(key, s, static_cast<uint64_t>(j0), cnt, wx, wy);
    for (int64_t q = 0; q < cnt; ++q) {
      const int64_t j = j0 + q;
      const int64_t m = base + j;  // draw from [0, m]
      int64_t t = static_cast<int64_t>(BelowFromXY(wx[q], wy[q], static_cast<uint64_t>(m + 1)));
      if (!taken->Insert(t)) {
        t = m;  // m is new: earlier draws were all < m
        taken->Insert(t);
      }
      dst[j] = t;
    }
  }
}

// Floyd's draw of k distinct positions of [0, n) for node s, writing get(t)
// for each drawn position t into dst (draw j -> dst[j]).
template <typename Get>
inline void FloydDraw(RngKey key, uint64_t s, int64_t k, int64_t n, TakenSet* taken, int64_t* dst,
                      const FloydFns& fns, Get get) {
  FloydPositions(key, s, k, n, taken, dst, fns);
  for (int64_t j = 0; j < k; ++j) dst[j] = get(dst[j]);
}

}  // namespace foresight::kernels::cpu
