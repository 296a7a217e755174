// The vector producers of sampling's draw words (philox_simd.h, and
// philox_avx512.h where the CPU has it) against RngKey::PairedBelow's
// scalar rule: draw d takes (x, y) of Bits(element, d / 2) when d is even
// and (z, w) when it is odd.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "foresight/core/rng.h"
#include "philox_avx512.h"
#include "philox_simd.h"

namespace foresight::kernels::cpu {
namespace {

using Producer = void (*)(RngKey, uint64_t, uint64_t, int64_t, uint32_t*, uint32_t*);

void ExpectPairedWords(Producer produce, const char* name) {
  const RngKey key = RngKey::FromSeed(17).Fold(3);
  // Elements with a high word; first draws at 0, mid-stream, and where the
  // counter's low word wraps within a step (counter 2^32 - 3).
  for (uint64_t element : {uint64_t{0}, uint64_t{12345}, (uint64_t{7} << 32) | 99}) {
    for (uint64_t first : {uint64_t{0}, uint64_t{64}, (uint64_t{1} << 33) - 6}) {
      for (int64_t n : {1, 2, 7, 15, 16, 17, 31, 32, 33, 64}) {
        std::vector<uint32_t> x(static_cast<size_t>(n + 32)), y(static_cast<size_t>(n + 32));
        produce(key, element, first, n, x.data(), y.data());
        for (int64_t j = 0; j < n; ++j) {
          const uint64_t d = first + static_cast<uint64_t>(j);
          const Uint4 b = key.Bits(element, d / 2);
          const uint64_t want = d % 2 == 0 ? (uint64_t{b.x} << 32) | b.y : (uint64_t{b.z} << 32) | b.w;
          ASSERT_EQ((uint64_t{x[j]} << 32) | y[j], want)
              << name << ": element " << element << ", draw " << d << " of " << n << " from " << first;
          ASSERT_EQ(BelowFromXY(x[j], y[j], 1000003), key.PairedBelow(1000003, element, d)) << name;
        }
      }
    }
  }
}

// The AVX2 producer always; the AVX-512 one where this CPU can run it.
TEST(PhiloxDraws, VectorWordsFollowThePairedRule) {
  ExpectPairedWords(PhiloxDrawsXY, "PhiloxDrawsXY");
#if defined(FS_HAVE_AVX512_PHILOX)
  if (HaveAvx512()) ExpectPairedWords(PhiloxDrawsXYAvx512, "PhiloxDrawsXYAvx512");
#endif
}

TEST(PhiloxDraws, TheTwoDrawsOfOneCallAreIndependent) {
  // Draws 2m and 2m + 1 share a Philox call: over 98k such pairs, every
  // one of the 7 x 7 outcomes comes up 2000 times, give or take 250 (about
  // 5.6 standard deviations). Two draws made from the same words would
  // fill only the diagonal.
  const RngKey key = RngKey::FromSeed(3);
  std::vector<int64_t> count(49, 0);
  for (uint64_t m = 0; m < 98000; ++m) {
    ++count[key.PairedBelow(7, 42, 2 * m) * 7 + key.PairedBelow(7, 42, 2 * m + 1)];
  }
  for (int64_t c : count) {
    EXPECT_GT(c, 1750);
    EXPECT_LT(c, 2250);
  }
}

}  // namespace
}  // namespace foresight::kernels::cpu
