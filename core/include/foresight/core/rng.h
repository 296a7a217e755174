// Counter-based random numbers (Philox4x32-10). A value is a pure function of
// (key, counter), so CPU and CUDA kernels draw the same numbers for the same
// (seed, epoch, batch, hop, node, draw) whatever the thread or block layout.
#pragma once

#include <cstdint>

#include "foresight/core/macros.h"

namespace foresight {

struct Uint4 { uint32_t x, y, z, w; };

// Philox4x32 with 10 rounds (Salmon et al., SC'11).
FS_HOST_DEVICE inline Uint4 Philox4x32(uint64_t key, uint64_t ctr_hi, uint64_t ctr_lo) {
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  uint32_t c0 = static_cast<uint32_t>(ctr_lo), c1 = static_cast<uint32_t>(ctr_lo >> 32);
  uint32_t c2 = static_cast<uint32_t>(ctr_hi), c3 = static_cast<uint32_t>(ctr_hi >> 32);
  for (int r = 0; r < 10; ++r) {
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * c0;
    const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return Uint4{c0, c1, c2, c3};
}

// SplitMix64 finaliser: mixes a 64-bit value into a well-spread key.
FS_HOST_DEVICE inline uint64_t Mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A stream of random numbers: a seed folded with the coordinates that name
// the stream (purpose, epoch, batch, hop...). Within a stream, a draw is
// addressed by (element, draw) counters.
struct RngKey {
  uint64_t key = 0;

  static FS_HOST_DEVICE RngKey FromSeed(uint64_t seed) { return RngKey{Mix64(seed)}; }
  // A child stream; Fold(a).Fold(b) != Fold(b).Fold(a).
  FS_HOST_DEVICE RngKey Fold(uint64_t value) const { return RngKey{Mix64(key ^ Mix64(value + 0x632BE59BD9B4E019ull))}; }

  // Four independent 32-bit words for (element, draw).
  FS_HOST_DEVICE Uint4 Bits(uint64_t element, uint64_t draw) const {
    return Philox4x32(key, draw, element);
  }
  FS_HOST_DEVICE uint32_t Bits32(uint64_t element, uint64_t draw) const {
    return Bits(element, draw).x;
  }
  // Uniform in [0, 1) with 24 bits.
  FS_HOST_DEVICE float Uniform(uint64_t element, uint64_t draw) const {
    return static_cast<float>(Bits32(element, draw) >> 8) * (1.0f / 16777216.0f);
  }
  // Number i of a flat stream of uniforms in [0, 1): four per Philox call
  // (the words of Bits(i / 4, draw)), for ops that draw once per element.
  FS_HOST_DEVICE float StreamUniform(uint64_t i, uint64_t draw) const {
    const Uint4 b = Bits(i >> 2, draw);
    const uint32_t k = static_cast<uint32_t>(i & 3);
    const uint32_t w = k == 0 ? b.x : k == 1 ? b.y : k == 2 ? b.z : b.w;
    return static_cast<float>(w >> 8) * (1.0f / 16777216.0f);
  }
  // Uniform integer in [0, n) without modulo bias worth caring about
  // (the high word of 64 random bits times n; bias < n / 2^64).
  FS_HOST_DEVICE uint64_t Below(uint64_t n, uint64_t element, uint64_t draw) const {
    const Uint4 b = Bits(element, draw);
    return BelowFrom((static_cast<uint64_t>(b.x) << 32) | b.y, n);
  }
  // Below for a stream of two draws per Philox call, for ops bound by
  // drawing (neighbour sampling): draw d takes the words (x, y) of
  // Bits(element, d / 2) when d is even and (z, w) when it is odd.
  FS_HOST_DEVICE uint64_t PairedBelow(uint64_t n, uint64_t element, uint64_t draw) const {
    const Uint4 b = Bits(element, draw >> 1);
    return BelowFrom((draw & 1) == 0 ? (static_cast<uint64_t>(b.x) << 32) | b.y
                                     : (static_cast<uint64_t>(b.z) << 32) | b.w,
                     n);
  }
  // [0, n) from 64 random bits r: the high word of r * n.
  static FS_HOST_DEVICE uint64_t BelowFrom(uint64_t r, uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(r) * n) >> 64);
  }
};

// Named stream purposes, folded into keys so different uses never collide.
enum class RngPurpose : uint64_t {
  kInit = 1, kDropout = 2, kSampling = 3, kShuffle = 4, kSplit = 5, kGenerate = 6, kAttnDropout = 7,
  kPartitionOrder = 8,
};

}  // namespace foresight
