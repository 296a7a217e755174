#include "foresight/core/rng.h"

#include <cmath>
#include <set>

#include "testing/testing.h"

namespace foresight {
namespace {

TEST(Rng, PhiloxKnownAnswer) {
  // Random123 known-answer test for philox4x32-10, counter=0, key=0.
  Uint4 r = Philox4x32(0, 0, 0);
  EXPECT_EQ(r.x, 0x6627e8d5u);
  EXPECT_EQ(r.y, 0xe169c58du);
  EXPECT_EQ(r.z, 0xbc57ac4cu);
  EXPECT_EQ(r.w, 0x9b00dbd8u);
}

TEST(Rng, PureFunctionOfKeyAndCounter) {
  RngKey k = RngKey::FromSeed(42).Fold(3).Fold(7);
  EXPECT_EQ(k.Bits32(10, 2), RngKey::FromSeed(42).Fold(3).Fold(7).Bits32(10, 2));
  EXPECT_NE(k.Bits32(10, 2), k.Bits32(10, 3));
  EXPECT_NE(RngKey::FromSeed(42).Fold(3).Fold(7).key, RngKey::FromSeed(42).Fold(7).Fold(3).key);
}

TEST(Rng, UniformMoments) {
  RngKey k = RngKey::FromSeed(1);
  double s = 0, s2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    float u = k.Uniform(i, 0);
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    s += u;
    s2 += u * u;
  }
  EXPECT_NEAR(s / n, 0.5, 0.005);
  EXPECT_NEAR(s2 / n - (s / n) * (s / n), 1.0 / 12, 0.002);
  std::set<uint64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    uint64_t v = k.Below(7, i, 1);
    ASSERT_LT(v, 7u);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
}

}  // namespace
}  // namespace foresight
