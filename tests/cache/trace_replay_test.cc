// ReplayTrace: a trace replayed through a planner gives the counters of
// driving the planner by hand the way the pipeline's plan stage does, and
// a batch's pinned predecessors are the last max_in_flight - 1.
#include "foresight/cache/trace_replay.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace foresight::cache {
namespace {

CacheConfig Config(Policy policy, int64_t slots, int lookahead) {
  CacheConfig c;
  c.policy = policy;
  c.row_bytes = 8;
  c.capacity_bytes = slots * 8;
  c.lookahead = lookahead;
  c.key_space = 100;
  return c;
}

TEST(TraceReplayTest, CountsEveryRowOfATraceThatFits) {
  const std::vector<std::vector<int64_t>> trace = {{1, 2, 3}, {2, 3, 4}, {1, 4, 5}};
  for (Policy p : {Policy::kLookahead, Policy::kLru}) {
    auto k = ReplayTrace(Config(p, 10, 2), trace);
    ASSERT_TRUE(k.ok()) << k.status().message();
    EXPECT_EQ(k->misses, 5) << PolicyName(p);  // each distinct row once
    EXPECT_EQ(k->hits, 4) << PolicyName(p);
  }
}

// One slot, batches of one row: with every batch released at once
// (max_in_flight 1) the slot can be reused and the repeat of row 7 hits;
// with batch 0 still pinned when batch 1 is planned (max_in_flight 2), row
// 8 cannot take the slot and bypasses, and row 7 stays resident to hit
// again.
TEST(TraceReplayTest, PinsTheBatchesInFlight) {
  const std::vector<std::vector<int64_t>> trace = {{7}, {8}, {7}};
  ReplayOptions one;
  one.max_in_flight = 1;
  auto lru1 = ReplayTrace(Config(Policy::kLru, 1, 0), trace, one);
  ASSERT_TRUE(lru1.ok());
  EXPECT_EQ(lru1->hits, 0);  // 8 evicted 7 (LRU admits every miss)
  EXPECT_EQ(lru1->bypassed, 0);
  ReplayOptions two;
  two.max_in_flight = 2;
  auto lru2 = ReplayTrace(Config(Policy::kLru, 1, 0), trace, two);
  ASSERT_TRUE(lru2.ok());
  EXPECT_EQ(lru2->bypassed, 1);  // 8: the only slot is pinned by batch 0
  EXPECT_EQ(lru2->hits, 1);      // 7 again
}

TEST(TraceReplayTest, StaticUsesItsKeysAndRejectsBadInput) {
  ReplayOptions o;
  o.static_keys = {4, 9};
  auto k = ReplayTrace(Config(Policy::kStatic, 1, 0), {{4, 5}, {4}}, o);
  ASSERT_TRUE(k.ok()) << k.status().message();
  EXPECT_EQ(k->hits, 1);    // 4 in batch 1
  EXPECT_EQ(k->misses, 2);  // the fill's 4 read by batch 0, and 5
  auto repeated = ReplayTrace(Config(Policy::kLru, 2, 0), {{1}, {2, 2}});
  ASSERT_FALSE(repeated.ok());
  EXPECT_NE(repeated.status().message().find("trace batch 1"), std::string::npos) << repeated.status().message();
  o.max_in_flight = 0;
  EXPECT_FALSE(ReplayTrace(Config(Policy::kLru, 2, 0), {{1}}, o).ok());
}

}  // namespace
}  // namespace foresight::cache
