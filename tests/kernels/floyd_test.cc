// Floyd's draws (floyd.h) on every path this CPU has: the portable one
// (Philox words and the Taken16 / TakenSet loops) and, where the CPU has
// AVX-512, FloydSmallAvx512, against the rule written the slow way.
#include "floyd.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

namespace foresight::kernels::cpu {
namespace {

std::vector<int64_t> NaiveFloyd(RngKey key, uint64_t s, int64_t k, int64_t n) {
  std::set<int64_t> taken;
  std::vector<int64_t> out;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t m = n - k + j;
    int64_t t = static_cast<int64_t>(key.PairedBelow(static_cast<uint64_t>(m + 1), s, static_cast<uint64_t>(j)));
    if (!taken.insert(t).second) {
      t = m;
      taken.insert(t);
    }
    out.push_back(t);
  }
  return out;
}

std::vector<int64_t> Draw(const FloydFns& fns, RngKey key, uint64_t s, int64_t k, int64_t n) {
  TakenSet taken;
  std::vector<int64_t> out(static_cast<size_t>(k));
  FloydPositions(key, s, k, n, &taken, out.data(), fns);
  return out;
}

void ExpectNaiveDraws(const FloydFns& fns, const char* name) {
  const RngKey key = RngKey::FromSeed(8).Fold(1);
  // Rows from one more than the draws (every draw may collide) to long
  // ones, nodes with a high word, draws on both sides of kSmallK.
  for (uint64_t s : {uint64_t{0}, uint64_t{77}, (uint64_t{3} << 32) + 5}) {
    for (int64_t k : {1, 2, 9, 10, 15, 16, 17, 40}) {
      for (int64_t n : {k + 1, k + 2, 2 * k, int64_t{100}, int64_t{5000}, int64_t{1} << 31, kSmallFloydMaxN,
                        int64_t{1} << 40}) {
        EXPECT_EQ(Draw(fns, key, s, k, n), NaiveFloyd(key, s, k, n))
            << name << ": node " << s << ", " << k << " of " << n;
      }
    }
  }
}

TEST(Floyd, PortablePathMatchesTheRule) { ExpectNaiveDraws(PortableFloydFns(), "portable"); }

// The path sampling takes on this CPU: FloydSmallAvx512 where it has
// AVX-512, else the portable path again.
TEST(Floyd, ThisCpusPathMatchesTheRule) {
  const FloydFns fns = ChooseFloydFns();
  ExpectNaiveDraws(fns, fns.small != nullptr ? "AVX-512" : "portable (no AVX-512 here)");
}

TEST(Floyd, DrawsAreDistinctAndInRange) {
  // The smallest rows make every later draw collide with an earlier one.
  const RngKey key = RngKey::FromSeed(2);
  for (const FloydFns& fns : {PortableFloydFns(), ChooseFloydFns()}) {
    for (uint64_t s = 0; s < 200; ++s) {
      const int64_t k = 1 + static_cast<int64_t>(s % 16), n = k + static_cast<int64_t>(s % 3);
      const std::vector<int64_t> d = Draw(fns, key, s, k, n);
      const std::set<int64_t> distinct(d.begin(), d.end());
      EXPECT_EQ(static_cast<int64_t>(distinct.size()), k) << "node " << s;
      EXPECT_GE(*distinct.begin(), 0);
      EXPECT_LT(*distinct.rbegin(), n);
    }
  }
}

}  // namespace
}  // namespace foresight::kernels::cpu
