// The lookahead policy's static tier (CacheConfig::hot_slots): the hottest
// rows fill the lowest slots on the first plan and stay there, and the
// lookahead tier plans the other rows in the other slots exactly as a plain
// lookahead cache of those slots plans the trace without the hot rows.
#include <algorithm>
#include <set>

#include "cache_test_util.h"

namespace foresight::cache::testing {
namespace {

// `trace` without the keys in `hot` (order kept).
Trace Without(const Trace& trace, const std::set<int64_t>& hot) {
  Trace out(trace.size());
  for (size_t b = 0; b < trace.size(); ++b) {
    for (int64_t k : trace[b]) {
      if (!hot.count(k)) out[b].push_back(k);
    }
  }
  return out;
}

// Every plan of `tiered` (static tier of hot.size() slots) against the plan
// of `plain` (the lookahead tier alone, on the trace without the hot keys):
// hot key j always in slot j (fetched by the first plan only), every other
// key where the plain plan puts it, shifted past the hot slots, or bypass
// when it bypasses there; then the counters, which differ only by the fill.
void ExpectTieredIsPlainPlusHot(const RunResult& tiered, const RunResult& plain, const Trace& trace,
                                const std::vector<int64_t>& hot) {
  const int64_t h = static_cast<int64_t>(hot.size());
  std::vector<int64_t> slot_of_hot(1000, -1);
  for (int64_t j = 0; j < h; ++j) slot_of_hot[hot[j]] = j;
  ASSERT_EQ(tiered.plans.size(), plain.plans.size());
  int64_t hot_uses = 0, first_batch_hot = 0;
  for (size_t t = 0; t < trace.size(); ++t) {
    SCOPED_TRACE("plan " + std::to_string(t));
    const BatchPlan& a = tiered.plans[t];
    const BatchPlan& b = plain.plans[t];
    size_t j = 0;  // position in the plain plan
    for (size_t i = 0; i < a.keys.size(); ++i) {
      const int64_t key = a.keys[i];
      if (slot_of_hot[key] >= 0) {
        ++hot_uses;
        first_batch_hot += t == 0;
        ASSERT_EQ(a.location[i], slot_of_hot[key]) << "hot key " << key;
        continue;
      }
      ASSERT_LT(j, b.keys.size());
      ASSERT_EQ(b.keys[j], key);
      ASSERT_EQ(a.location[i], b.location[j] == kBypass ? kBypass : b.location[j] + h) << "key " << key;
      ++j;
    }
    ASSERT_EQ(j, b.keys.size());
    std::vector<SlotKey> expected_fetches;
    if (t == 0) {
      for (int64_t s = 0; s < h; ++s) expected_fetches.push_back(SlotKey{hot[s], s});
    }
    for (const SlotKey& f : b.fetches) expected_fetches.push_back(SlotKey{f.key, f.slot + h});
    ASSERT_EQ(a.fetches.size(), expected_fetches.size());
    for (size_t f = 0; f < a.fetches.size(); ++f) {
      EXPECT_EQ(a.fetches[f].key, expected_fetches[f].key);
      EXPECT_EQ(a.fetches[f].slot, expected_fetches[f].slot);
    }
  }
  // The first batch's hot rows are read by the fill: misses, as for static.
  EXPECT_EQ(tiered.counters.misses, plain.counters.misses + first_batch_hot);
  EXPECT_EQ(tiered.counters.hits, plain.counters.hits + hot_uses - first_batch_hot);
  EXPECT_EQ(tiered.counters.fetches, plain.counters.fetches + h);
  EXPECT_EQ(tiered.counters.evictions, plain.counters.evictions);
  EXPECT_EQ(tiered.counters.bypassed, plain.counters.bypassed);
}

TEST(HotTier, IsTheLookaheadTierOnTheOtherRowsAndSlots) {
  const Trace traces[] = {ZipfTrace(60, 12, 200, 1.1, 51), UniformTrace(60, 12, 80, 52),
                          NeighbourhoodTrace(60, 12, 300, 53)};
  for (const Trace& trace : traces) {
    const std::vector<int64_t> by_frequency = ByFrequency(trace);
    for (int64_t slots : {1, 6, 20, 60}) {
      for (int64_t h : {int64_t{1}, slots / 3, slots / 2, slots}) {
        if (h < 1) continue;
        for (int depth : {1, 4}) {
          for (int window : {0, 5, 60}) {
            for (int64_t key_space : {int64_t{1000}, int64_t{0}}) {
              SCOPED_TRACE("slots " + std::to_string(slots) + " hot " + std::to_string(h) + " depth " +
                           std::to_string(depth) + " window " + std::to_string(window) + " key_space " +
                           std::to_string(key_space));
              const std::vector<int64_t> hot(by_frequency.begin(), by_frequency.begin() + h);
              CacheConfig c = Config(Policy::kLookahead, slots, window, key_space);
              c.hot_slots = h;
              ASSERT_OK_AND_ASSIGN(RunResult tiered, RunTrace(c, trace, depth, hot));
              CheckPlans(tiered, trace, depth, slots);
              const Trace rest = Without(trace, std::set<int64_t>(hot.begin(), hot.end()));
              ASSERT_OK_AND_ASSIGN(RunResult plain,
                                   RunTrace(Config(Policy::kLookahead, slots - h, window, key_space), rest, depth));
              ExpectTieredIsPlainPlusHot(tiered, plain, trace, hot);
              if (HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
}

// With page companions the tier holds too: the hot slots are fetched by the
// first plan only (no companion or miss ever lands there), and every use
// of a hot key is its slot.
TEST(HotTier, CompanionsNeverTakeTheHotSlots) {
  const Trace trace = NeighbourhoodTrace(80, 16, 400, 54);
  const std::vector<int64_t> by_frequency = ByFrequency(trace);
  int64_t companions = 0;
  for (int64_t slots : {8, 40}) {
    for (int64_t h : {int64_t{1}, slots / 2}) {
      SCOPED_TRACE("slots " + std::to_string(slots) + " hot " + std::to_string(h));
      const std::vector<int64_t> hot(by_frequency.begin(), by_frequency.begin() + h);
      CacheConfig c = Config(Policy::kLookahead, slots, 8, 1000);
      c.hot_slots = h;
      c.page_rows = 8;
      ASSERT_OK_AND_ASSIGN(RunResult r, RunTrace(c, trace, 4, hot));
      CheckPlans(r, trace, 4, slots);
      companions += r.counters.companions;
      for (size_t t = 0; t < r.plans.size(); ++t) {
        for (const SlotKey& f : r.plans[t].fetches) {
          if (t > 0) {
            EXPECT_GE(f.slot, h) << "plan " << t << " refetched hot slot " << f.slot;
          }
        }
        const BatchPlan& p = r.plans[t];
        for (size_t i = 0; i < p.keys.size(); ++i) {
          const auto at = std::find(hot.begin(), hot.end(), p.keys[i]);
          if (at != hot.end()) {
            EXPECT_EQ(p.location[i], at - hot.begin()) << "plan " << t;
          }
        }
      }
    }
  }
  EXPECT_GT(companions, 0);  // the rule was exercised
}

// Fewer hot keys than hot slots: the rest of the tier is the lookahead's.
TEST(HotTier, FewerKeysLeaveTheirSlotsToLookahead) {
  const Trace trace = ZipfTrace(40, 10, 100, 1.1, 55);
  const std::vector<int64_t> by_frequency = ByFrequency(trace);
  const std::vector<int64_t> hot(by_frequency.begin(), by_frequency.begin() + 3);
  CacheConfig c = Config(Policy::kLookahead, 12, 6, 1000);
  c.hot_slots = 8;
  ASSERT_OK_AND_ASSIGN(RunResult tiered, RunTrace(c, trace, 2, hot));
  CheckPlans(tiered, trace, 2, 12);
  ASSERT_OK_AND_ASSIGN(RunResult plain,
                       RunTrace(Config(Policy::kLookahead, 9, 6, 1000),
                                Without(trace, std::set<int64_t>(hot.begin(), hot.end())), 2));
  ExpectTieredIsPlainPlusHot(tiered, plain, trace, hot);
}

TEST(HotTier, RejectsBadArguments) {
  CacheConfig c = Config(Policy::kLookahead, 4, 2, 10);
  c.hot_slots = 5;
  EXPECT_ERROR_CONTAINS(CachePlanner::Create(c), "hot_slots must be in [0, num_slots] = [0, 4]", "got 5");
  c.hot_slots = -1;
  EXPECT_ERROR_CONTAINS(CachePlanner::Create(c), "got -1");
  for (Policy p : {Policy::kLru, Policy::kStatic}) {
    c = Config(p, 4, 2, 10);
    c.hot_slots = 2;
    EXPECT_ERROR_CONTAINS(CachePlanner::Create(c), "> 0 only with the lookahead policy", PolicyName(p));
  }
  c = Config(Policy::kLookahead, 4, 0, 10);
  c.hot_slots = 2;
  ASSERT_OK_AND_ASSIGN(auto planner, CachePlanner::Create(c));
  ASSERT_OK(planner->Submit({1, 2}));
  EXPECT_ERROR_CONTAINS(planner->PlanNext(), "the lookahead policy's static tier needs SetStaticKeys");
  EXPECT_ERROR_CONTAINS(planner->SetStaticKeys({3, 10}), "key 10 at position 1 is outside [0, 10)");
  ASSERT_OK(planner->SetStaticKeys({3, 1}));
  ASSERT_OK_AND_ASSIGN(BatchPlan p0, planner->PlanNext());
  EXPECT_EQ(p0.fetches.size(), 3u);  // the tier's two rows and key 2
  EXPECT_EQ(p0.misses, 2);
  EXPECT_ERROR_CONTAINS(planner->SetStaticKeys({2}), "already filled by the first plan");
}

}  // namespace
}  // namespace foresight::cache::testing
