// The edge-bucket order: every (head partition, tail partition) bucket
// trains exactly once per epoch, only while both its partitions are
// resident, in a buffer never above its capacity; the partition loads stay
// within 1.2x of the lower bound on the configurations the header names
// (and meet it with a buffer of 2, or one load each when all fit); epochs
// reorder the buckets, not the count; bad arguments are refused.
#include "foresight/sampler/bucket_order.h"

#include <algorithm>
#include <set>
#include <string>

#include "testing/testing.h"

namespace foresight::sampler {
namespace {

// Checks the plan's invariants and returns its loads.
int64_t CheckPlan(const BucketPlan& plan, int p, int c) {
  std::set<std::pair<int, int>> seen;
  std::vector<int> resident;
  for (const BucketStep& s : plan.steps) {
    EXPECT_TRUE(std::find(resident.begin(), resident.end(), s.loaded) == resident.end()) << "reloaded a resident";
    if (s.evicted >= 0) resident.erase(std::find(resident.begin(), resident.end(), s.evicted));
    resident.push_back(s.loaded);
    std::vector<int> sorted = resident;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, s.resident);
    EXPECT_LE(static_cast<int>(resident.size()), std::min(c, p));
    for (const auto& [a, b] : s.buckets) {
      EXPECT_TRUE(std::binary_search(sorted.begin(), sorted.end(), a));
      EXPECT_TRUE(std::binary_search(sorted.begin(), sorted.end(), b));
      EXPECT_TRUE(seen.insert({a, b}).second) << "bucket " << a << "," << b << " twice";
    }
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), static_cast<int64_t>(p) * p);
  return plan.loads();
}

TEST(BucketOrderTest, EveryBucketOnceWhileResidentAndLoadsNearTheBound) {
  for (int p : {8, 16, 32, 64, 128}) {
    for (int c : {2, 4, 8, 16, 32}) {
      if (c > p / 2) continue;
      SCOPED_TRACE("P=" + std::to_string(p) + " C=" + std::to_string(c));
      ASSERT_OK_AND_ASSIGN(BucketPlan plan, PlanBuckets(p, c, 7, 0));
      const int64_t loads = CheckPlan(plan, p, c);
      const int64_t bound = BucketLoadsLowerBound(p, c);
      EXPECT_GE(loads, bound);
      EXPECT_LE(static_cast<double>(loads), 1.2 * static_cast<double>(bound)) << loads << " vs " << bound;
      if (c == 2) EXPECT_EQ(loads, bound);
    }
  }
}

TEST(BucketOrderTest, OddSizesCoverEveryBucket) {
  for (int p : {1, 2, 3, 5, 7, 10, 13}) {
    for (int c : {2, 3, 4, 6, 20}) {
      SCOPED_TRACE("P=" + std::to_string(p) + " C=" + std::to_string(c));
      ASSERT_OK_AND_ASSIGN(BucketPlan plan, PlanBuckets(p, c, 1, 3));
      const int64_t loads = CheckPlan(plan, p, c);
      EXPECT_GE(loads, BucketLoadsLowerBound(p, c));
      if (c >= p) EXPECT_EQ(loads, p);
    }
  }
}

TEST(BucketOrderTest, KnownBoundValues) {
  // 16 partitions, buffer 4: 4 + ceil((120 - 6) / 3) = 42.
  EXPECT_EQ(BucketLoadsLowerBound(16, 4), 42);
  EXPECT_EQ(BucketLoadsLowerBound(8, 2), 29);  // 2 + 27
  EXPECT_EQ(BucketLoadsLowerBound(5, 8), 5);
}

TEST(BucketOrderTest, EpochsReorderBucketsWithTheSameLoads) {
  ASSERT_OK_AND_ASSIGN(BucketPlan a, PlanBuckets(16, 4, 7, 0));
  ASSERT_OK_AND_ASSIGN(BucketPlan b, PlanBuckets(16, 4, 7, 1));
  ASSERT_OK_AND_ASSIGN(BucketPlan again, PlanBuckets(16, 4, 7, 0));
  EXPECT_EQ(a.loads(), b.loads());
  std::vector<int> la, lb, lagain;
  for (const BucketStep& s : a.steps) la.push_back(s.loaded);
  for (const BucketStep& s : b.steps) lb.push_back(s.loaded);
  for (const BucketStep& s : again.steps) lagain.push_back(s.loaded);
  EXPECT_NE(la, lb);
  EXPECT_EQ(la, lagain);
}

TEST(BucketOrderTest, BadArgumentsAreRefused) {
  EXPECT_ERROR_CONTAINS(PlanBuckets(0, 4, 0, 0), "at least 1 partition");
  EXPECT_ERROR_CONTAINS(PlanBuckets(8, 1, 0, 0), "buffer of 1", ">= 2");
}

}  // namespace
}  // namespace foresight::sampler
