// Plan consistency under pipelining (pinning), oversized batches, the static
// policy's fill, dense vs sparse keys, and argument errors.
#include <limits>
#include <set>

#include "cache_test_util.h"

namespace foresight::cache::testing {
namespace {

const Policy kPolicies[] = {Policy::kLookahead, Policy::kLru, Policy::kStatic};

TEST(CachePlanner, PinnedSlotsAreNeverReassigned) {
  const Trace traces[] = {UniformTrace(50, 12, 60, 7), ZipfTrace(50, 12, 100, 1.0, 8), NeighbourhoodTrace(50, 12, 200, 9)};
  for (const Trace& trace : traces) {
    for (Policy policy : kPolicies) {
      for (int64_t slots : {0, 1, 5, 13, 30, 200}) {
        for (int depth : {1, 2, 3, 5}) {
          for (int window : {0, 3, 50}) {
            SCOPED_TRACE(std::string(PolicyName(policy)) + " slots " + std::to_string(slots) + " depth " +
                         std::to_string(depth) + " window " + std::to_string(window));
            const CacheConfig c = Config(policy, slots, window, 1000, /*writable=*/true);
            ASSERT_OK_AND_ASSIGN(RunResult r, RunTrace(c, trace, depth, ByFrequency(trace), /*wrote=*/true));
            CheckPlans(r, trace, depth, slots);
            int64_t misses = 0;
            for (const BatchPlan& p : r.plans) misses += p.misses;
            EXPECT_EQ(r.counters.misses, misses);
          }
        }
      }
    }
  }
}

// Distinct pages (of `per_page` keys) that the plans read: fetches and
// bypass rows (the reads a page-granular store issues, at least).
int64_t PagesRead(const RunResult& r, int64_t per_page) {
  int64_t pages = 0;
  for (const BatchPlan& p : r.plans) {
    std::set<int64_t> read;
    for (const SlotKey& f : p.fetches) read.insert(f.key / per_page);
    for (const int64_t i : p.bypass) read.insert(p.keys[i] / per_page);
    pages += static_cast<int64_t>(read.size());
  }
  return pages;
}

// page_rows: companions keep every plan consistent (no pinned slot taken, no
// slot fetched twice, every located key where the plan says), come only
// from the pages of the plan's own misses, and on a trace whose batches
// share neighbourhoods read fewer pages than the same cache without them.
TEST(CachePlanner, PageCompanionsShareTheMissesReads) {
  const Trace trace = NeighbourhoodTrace(200, 24, 2000, 11);
  for (int64_t slots : {0, 5, 40, 300}) {
    for (int depth : {1, 3}) {
      for (int window : {0, 4, 16}) {
        SCOPED_TRACE("slots " + std::to_string(slots) + " depth " + std::to_string(depth) + " window " +
                     std::to_string(window));
        CacheConfig c = Config(Policy::kLookahead, slots, window, 2000);
        ASSERT_OK_AND_ASSIGN(RunResult plain, RunTrace(c, trace, depth));
        c.page_rows = 4;
        ASSERT_OK_AND_ASSIGN(RunResult paged, RunTrace(c, trace, depth));
        CheckPlans(paged, trace, depth, slots);
        for (const BatchPlan& p : paged.plans) {
          std::set<int64_t> miss_pages;
          for (size_t i = 0; i < p.keys.size(); ++i) {
            if (p.location[i] == kBypass) miss_pages.insert(p.keys[i] / 4);
          }
          std::set<int64_t> batch_keys(p.keys.begin(), p.keys.end());
          for (const SlotKey& f : p.fetches) {
            if (!batch_keys.count(f.key)) {
              // A companion: a page this plan reads for a miss of its own.
              bool shares = miss_pages.count(f.key / 4) > 0;
              for (const SlotKey& g : p.fetches) shares = shares || (batch_keys.count(g.key) && g.key / 4 == f.key / 4);
              EXPECT_TRUE(shares) << "plan " << p.seq << " fetched " << f.key << " on a page it does not read";
            }
          }
        }
        if (slots >= 40 && window > 0) {
          EXPECT_GT(paged.counters.companions, 0);
          EXPECT_LT(PagesRead(paged, 4), PagesRead(plain, 4));
        }
        if (slots == 0 || window == 0) {
          EXPECT_EQ(paged.counters.companions, 0);
        }
      }
    }
  }
  CacheConfig bad = Config(Policy::kLookahead, 10, 4, 0);
  bad.page_rows = 4;
  EXPECT_ERROR_CONTAINS(CachePlanner::Create(bad), "page_rows", "dense keys");
  // A writable cache takes pages too: read_after_write_test runs the
  // companions and the page write-backs against the read-after-write rule.
}

// companion_rows: a miss's companions come from its aligned span of that
// many rows (several pages) instead of its page; plans stay consistent, and
// the plans touch fewer spans (the reads a store that joins a span's pages
// issues) than with page companions alone. Spans must be whole pages.
TEST(CachePlanner, CompanionSpanBringsTheWindowsRowsNearAMiss) {
  const Trace trace = NeighbourhoodTrace(200, 24, 2000, 11);
  for (int64_t slots : {40, 300}) {
    for (int window : {4, 16}) {
      SCOPED_TRACE("slots " + std::to_string(slots) + " window " + std::to_string(window));
      CacheConfig c = Config(Policy::kLookahead, slots, window, 2000);
      c.page_rows = 4;
      ASSERT_OK_AND_ASSIGN(RunResult paged, RunTrace(c, trace, 2));
      c.companion_rows = 16;
      ASSERT_OK_AND_ASSIGN(RunResult spanned, RunTrace(c, trace, 2));
      CheckPlans(spanned, trace, 2, slots);
      for (const BatchPlan& p : spanned.plans) {
        std::set<int64_t> batch_keys(p.keys.begin(), p.keys.end());
        std::set<int64_t> own_spans;
        for (size_t i = 0; i < p.keys.size(); ++i) {
          if (p.location[i] == kBypass) own_spans.insert(p.keys[i] / 16);
        }
        for (const SlotKey& f : p.fetches) {
          if (batch_keys.count(f.key)) own_spans.insert(f.key / 16);
        }
        for (const SlotKey& f : p.fetches) {
          if (!batch_keys.count(f.key)) {
            EXPECT_TRUE(own_spans.count(f.key / 16)) << "plan " << p.seq << " fetched " << f.key << " off its spans";
          }
        }
      }
      EXPECT_GT(spanned.counters.companions, paged.counters.companions);
      EXPECT_LT(PagesRead(spanned, 16), PagesRead(paged, 16));
    }
  }
  CacheConfig bad = Config(Policy::kLookahead, 10, 4, 2000);
  bad.page_rows = 4;
  bad.companion_rows = 6;
  EXPECT_ERROR_CONTAINS(CachePlanner::Create(bad), "companion_rows", "multiple of page_rows");
  bad.page_rows = 0;
  bad.companion_rows = 16;
  EXPECT_ERROR_CONTAINS(CachePlanner::Create(bad), "companion_rows");
}

TEST(CachePlanner, ABatchLargerThanTheCacheGetsEverySlot) {
  std::vector<int64_t> big;
  for (int64_t k = 0; k < 50; ++k) big.push_back((k * 37) % 50);
  for (Policy policy : kPolicies) {
    SCOPED_TRACE(PolicyName(policy));
    ASSERT_OK_AND_ASSIGN(auto planner, CachePlanner::Create(Config(policy, 8, 0, 101)));
    if (policy == Policy::kStatic) ASSERT_OK(planner->SetStaticKeys(big));
    ASSERT_OK(planner->Submit(big));
    std::vector<int64_t> other;
    for (int64_t k = 0; k < 20; ++k) other.push_back(60 + k);
    ASSERT_OK(planner->Submit(other));
    ASSERT_OK_AND_ASSIGN(BatchPlan p, planner->PlanNext());
    std::set<int64_t> slots;
    for (int64_t s : p.location) {
      if (s != kBypass) slots.insert(s);
    }
    EXPECT_EQ(slots.size(), 8u);
    EXPECT_EQ(p.bypass.size(), big.size() - 8);
    EXPECT_EQ(p.misses, 50);
    // The second batch while the first is in flight: every slot is pinned.
    ASSERT_OK_AND_ASSIGN(BatchPlan q, planner->PlanNext());
    int64_t in_cache = 0;
    for (int64_t s : q.location) in_cache += s != kBypass;
    EXPECT_EQ(in_cache, 0);
    EXPECT_TRUE(q.fetches.empty());
    ASSERT_OK(planner->Release(0, false));
    ASSERT_OK(planner->Release(1, false));
  }
}

TEST(StaticPolicy, FillsOnceNeverEvictsOthersBypass) {
  const Trace trace = ZipfTrace(30, 15, 120, 1.0, 11);
  const std::vector<int64_t> order = ByFrequency(trace);
  for (int64_t slots : {0, 4, 20, 500}) {
    SCOPED_TRACE("slots " + std::to_string(slots));
    ASSERT_OK_AND_ASSIGN(RunResult r, RunTrace(Config(Policy::kStatic, slots, 2, 0), trace, 2, order));
    const int64_t fill = std::min<int64_t>(slots, order.size());
    std::set<int64_t> chosen(order.begin(), order.begin() + fill);
    ASSERT_EQ(static_cast<int64_t>(r.plans[0].fetches.size()), fill);
    for (int64_t j = 0; j < fill; ++j) {
      EXPECT_EQ(r.plans[0].fetches[j].key, order[j]);
      EXPECT_EQ(r.plans[0].fetches[j].slot, j);
    }
    EXPECT_EQ(r.counters.fetches, fill);
    EXPECT_EQ(r.counters.evictions, 0);
    int64_t hits = 0, total = 0;
    for (size_t t = 0; t < trace.size(); ++t) {
      const BatchPlan& p = r.plans[t];
      if (t > 0) {
        EXPECT_TRUE(p.fetches.empty());
      }
      EXPECT_TRUE(p.writebacks.empty());
      for (size_t i = 0; i < p.keys.size(); ++i) {
        const bool cached = chosen.count(p.keys[i]) > 0;
        EXPECT_EQ(p.location[i] != kBypass, cached) << "key " << p.keys[i];
        if (cached) {
          EXPECT_EQ(order[p.location[i]], p.keys[i]);
        }
        hits += cached && t > 0;
        ++total;
      }
    }
    EXPECT_EQ(r.counters.hits, hits);  // the fill's keys read by batch 0 are its misses
    EXPECT_EQ(r.counters.misses, total - hits);
  }
}

// Keys k -> k * 1000003 - 5e17 (a bijection onto sparse, partly negative
// keys): sparse plans equal dense plans up to the renaming.
TEST(CachePlanner, DenseAndSparseKeysGiveTheSamePlans) {
  auto rename = [](int64_t k) { return k * 1000003 - 500000000000000000; };
  const Trace traces[] = {ZipfTrace(40, 20, 150, 1.1, 21), NeighbourhoodTrace(40, 20, 300, 22)};
  for (const Trace& trace : traces) {
    Trace renamed = trace;
    for (auto& b : renamed)
      for (auto& k : b) k = rename(k);
    std::vector<int64_t> order = ByFrequency(trace), order_renamed = order;
    for (auto& k : order_renamed) k = rename(k);
    for (Policy policy : kPolicies) {
      for (int64_t slots : {3, 17, 60}) {
        SCOPED_TRACE(std::string(PolicyName(policy)) + " slots " + std::to_string(slots));
        ASSERT_OK_AND_ASSIGN(RunResult dense, RunTrace(Config(policy, slots, 4, 300, true), trace, 3, order, true));
        ASSERT_OK_AND_ASSIGN(RunResult sparse, RunTrace(Config(policy, slots, 4, 0, true), trace, 3, order, true));
        ASSERT_OK_AND_ASSIGN(RunResult named,
                             RunTrace(Config(policy, slots, 4, 0, true), renamed, 3, order_renamed, true));
        // Dense keys with the window index (lookahead only; the others
        // ignore the field): a map made for 2 keys, so it grows too.
        CacheConfig windowed = Config(policy, slots, 4, 300, true);
        windowed.window_index_keys = 2;
        ASSERT_OK_AND_ASSIGN(RunResult window, RunTrace(windowed, trace, 3, order, true));
        for (size_t t = 0; t < trace.size(); ++t) {
          for (const RunResult* other : {&sparse, &named, &window}) {
            const BatchPlan& a = dense.plans[t];
            const BatchPlan& b = other->plans[t];
            EXPECT_EQ(a.location, b.location);
            EXPECT_EQ(a.bypass, b.bypass);
            EXPECT_EQ(a.wait_for_seq, b.wait_for_seq);
            ASSERT_EQ(a.fetches.size(), b.fetches.size());
            ASSERT_EQ(a.writebacks.size(), b.writebacks.size());
            const bool ren = other == &named;
            for (size_t j = 0; j < a.fetches.size(); ++j) {
              EXPECT_EQ(ren ? rename(a.fetches[j].key) : a.fetches[j].key, b.fetches[j].key);
              EXPECT_EQ(a.fetches[j].slot, b.fetches[j].slot);
            }
            for (size_t j = 0; j < a.writebacks.size(); ++j) {
              EXPECT_EQ(ren ? rename(a.writebacks[j].key) : a.writebacks[j].key, b.writebacks[j].key);
              EXPECT_EQ(a.writebacks[j].slot, b.writebacks[j].slot);
            }
          }
        }
        EXPECT_EQ(dense.counters.misses, named.counters.misses);
        EXPECT_EQ(dense.counters.writebacks, named.counters.writebacks);
      }
    }
  }
}

// The window index holds the resident rows and the window's keys, not the
// key space: over a trace of 10^6 distinct keys in a 10^12 key space, a
// map made for 64 slots + 5 batches of 16 keys never grows and costs far
// less than the flat array would.
TEST(CachePlanner, WindowIndexIsSizedToTheWindow) {
  CacheConfig c = Config(Policy::kLookahead, 64, 3, int64_t{1} << 40, true);
  c.window_index_keys = 64 + 5 * 16;
  const int64_t bytes = LookaheadIndexBytes(c);
  EXPECT_LE(bytes, 64 * c.window_index_keys + 64 * 32);
  CacheConfig flat = c;
  flat.window_index_keys = 0;
  EXPECT_EQ(LookaheadIndexBytes(flat), ((int64_t{1} << 40) + 1) * 24);
  ASSERT_OK_AND_ASSIGN(auto planner, CachePlanner::Create(c));
  int64_t next_key = 0, planned = 0;
  const int64_t batches = 1000000 / 16;
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<int64_t> keys;
    for (int j = 0; j < 16; ++j) keys.push_back((next_key++ * 7919) % (int64_t{1} << 40));
    ASSERT_OK(planner->Submit(std::move(keys)));
    while (planner->CanPlan()) {
      ASSERT_OK_AND_ASSIGN(BatchPlan p, planner->PlanNext());
      ASSERT_OK(planner->Release(p.seq, true));
      ++planned;
    }
  }
  planner->Close();
  while (planner->CanPlan()) {
    ASSERT_OK_AND_ASSIGN(BatchPlan p, planner->PlanNext());
    ASSERT_OK(planner->Release(p.seq, true));
    ++planned;
  }
  EXPECT_EQ(planned, batches);
  EXPECT_EQ(planner->counters().misses, 1000000);
}

TEST(CachePlanner, RejectsBadArguments) {
  CacheConfig c = Config(Policy::kLookahead, 4, 2, 10);
  c.window_index_keys = -1;
  EXPECT_ERROR_CONTAINS(CachePlanner::Create(c), "window_index_keys must be >= 0");
  c = Config(Policy::kLookahead, 4, 2, 10);
  c.row_bytes = 0;
  EXPECT_ERROR_CONTAINS(CachePlanner::Create(c), "row_bytes must be > 0, got 0");
  c = Config(Policy::kLookahead, 4, 2, 10);
  c.capacity_bytes = -1;
  EXPECT_ERROR_CONTAINS(CachePlanner::Create(c), "capacity_bytes must be >= 0, got -1");
  c = Config(Policy::kLookahead, 4, -1, 10);
  EXPECT_ERROR_CONTAINS(CachePlanner::Create(c), "lookahead must be >= 0, got -1");
  EXPECT_ERROR_CONTAINS(ParsePolicy("fifo"), "unknown cache policy 'fifo' (expected lookahead, lru or static)");
  ASSERT_OK_AND_ASSIGN(Policy p, ParsePolicy("static"));
  EXPECT_EQ(p, Policy::kStatic);
  EXPECT_STREQ(PolicyName(Policy::kLru), "lru");

  ASSERT_OK_AND_ASSIGN(auto planner, CachePlanner::Create(Config(Policy::kLookahead, 4, 2, 10)));
  EXPECT_ERROR_CONTAINS(planner->Submit({1, 2, 3, 2}), "Submit: batch 0 repeats key 2 (positions 1 and 3)");
  EXPECT_ERROR_CONTAINS(planner->Submit({1, 10}), "Submit: batch 0: key 10 at position 1 is outside [0, 10)");
  EXPECT_ERROR_CONTAINS(planner->Submit({-3}), "key -3 at position 0 is outside [0, 10)");
  EXPECT_ERROR_CONTAINS(planner->SetStaticKeys({1}), "the cache policy is lookahead; only the static policy");
  ASSERT_OK(planner->Submit({1, 2}));
  ASSERT_OK(planner->Submit({3}));
  EXPECT_FALSE(planner->CanPlan());
  EXPECT_ERROR_CONTAINS(planner->PlanNext(),
                        "PlanNext: batch 0 needs 2 submitted batches after it (lookahead) or Close(); 1 are");
  EXPECT_ERROR_CONTAINS(planner->Release(0, false), "Release: batch 0 is not in flight (it was not planned yet");
  EXPECT_ERROR_CONTAINS(planner->Release(7, false), "Release: batch 7 is not in flight (it was never submitted");
  planner->Close();
  EXPECT_ERROR_CONTAINS(planner->Submit({4}), "Submit: the planner was closed after batch 1");
  ASSERT_TRUE(planner->CanPlan());
  ASSERT_OK_AND_ASSIGN(BatchPlan b0, planner->PlanNext());
  EXPECT_ERROR_CONTAINS(planner->Release(0, true), "batch 0 wrote its rows but the cache is read-only");
  EXPECT_ERROR_CONTAINS(planner->TakeDirty(), "TakeDirty: 1 batches are in flight");
  ASSERT_OK(planner->Release(0, false));
  EXPECT_ERROR_CONTAINS(planner->Release(0, false), "Release: batch 0 is not in flight (it was already released");
  ASSERT_OK_AND_ASSIGN(BatchPlan b1, planner->PlanNext());
  ASSERT_OK(planner->Release(1, false));
  EXPECT_FALSE(planner->CanPlan());
  EXPECT_ERROR_CONTAINS(planner->PlanNext(), "PlanNext: batch 2 was not submitted and the planner is closed");

  ASSERT_OK_AND_ASSIGN(auto sparse, CachePlanner::Create(Config(Policy::kLru, 4, 0, 0)));
  EXPECT_ERROR_CONTAINS(sparse->Submit({5, std::numeric_limits<int64_t>::min()}),
                        "key -9223372036854775808 at position 1 is reserved");
  ASSERT_OK(sparse->Submit({-5, std::numeric_limits<int64_t>::max()}));

  ASSERT_OK_AND_ASSIGN(auto fixed, CachePlanner::Create(Config(Policy::kStatic, 4, 0, 10)));
  ASSERT_OK(fixed->Submit({1}));
  EXPECT_ERROR_CONTAINS(fixed->PlanNext(), "the static policy needs SetStaticKeys before the first plan");
  EXPECT_ERROR_CONTAINS(fixed->SetStaticKeys({3, 11}), "SetStaticKeys: key 11 at position 1 is outside [0, 10)");
  EXPECT_ERROR_CONTAINS(fixed->SetStaticKeys({3, 3}), "SetStaticKeys repeats key 3 (positions 0 and 1)");
  ASSERT_OK(fixed->SetStaticKeys({3, 1}));
  ASSERT_OK_AND_ASSIGN(BatchPlan f0, fixed->PlanNext());
  EXPECT_EQ(f0.fetches.size(), 2u);
  EXPECT_ERROR_CONTAINS(fixed->SetStaticKeys({2}), "already filled by the first plan");
}

// Beyond the window the lookahead policy evicts clean rows before dirty
// ones (a clean row leaves without a write-back); LRU evicts the least
// recently used whatever it holds. Batch 0 writes key 1, batch 1 only
// reads key 2, batch 2's key 3 needs one of their two slots, and batch 3
// reads key 1 again.
TEST(LookaheadPlannerTest, EvictsCleanRowsBeforeDirtyOnes) {
  for (const Policy policy : {Policy::kLookahead, Policy::kLru}) {
    for (const bool window_index : {false, true}) {
      SCOPED_TRACE(std::string(PolicyName(policy)) + (window_index ? ", window index" : ""));
      CacheConfig c = Config(policy, /*slots=*/2, /*lookahead=*/0, /*key_space=*/100, /*writable=*/true);
      if (window_index) c.window_index_keys = 16;
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<CachePlanner> planner, CachePlanner::Create(c));
      for (const int64_t k : {1, 2, 3, 1}) ASSERT_OK(planner->Submit({k}));
      ASSERT_OK_AND_ASSIGN(BatchPlan p0, planner->PlanNext());
      ASSERT_OK(planner->Release(p0.seq, /*wrote=*/true));
      ASSERT_OK_AND_ASSIGN(BatchPlan p1, planner->PlanNext());
      ASSERT_OK(planner->Release(p1.seq, /*wrote=*/false));
      ASSERT_OK_AND_ASSIGN(BatchPlan p2, planner->PlanNext());
      ASSERT_OK(planner->Release(p2.seq, /*wrote=*/false));
      ASSERT_EQ(p2.fetches.size(), 1u);
      if (policy == Policy::kLookahead) {
        EXPECT_TRUE(p2.writebacks.empty());
        EXPECT_EQ(p2.fetches[0].slot, p1.fetches[0].slot);  // key 2's
      } else {
        ASSERT_EQ(p2.writebacks.size(), 1u);
        EXPECT_EQ(p2.writebacks[0].key, 1);
      }
      ASSERT_OK_AND_ASSIGN(BatchPlan p3, planner->PlanNext());
      ASSERT_OK(planner->Release(p3.seq, /*wrote=*/true));
      EXPECT_EQ(p3.hits, policy == Policy::kLookahead ? 1 : 0);
      ASSERT_OK_AND_ASSIGN(std::vector<SlotKey> dirty, planner->TakeDirty());
      ASSERT_EQ(dirty.size(), 1u);
      EXPECT_EQ(dirty[0].key, 1);
    }
  }
}

// With pages (page_rows), evicting a dirty row also writes back the other
// dirty rows of its page that no batch holds; they stay resident, clean,
// so evicting them later writes nothing. Pages of 4 keys; 3 slots; no
// window. Batch 0 writes keys 1 and 2 (page 0), batch 1 writes 9 (page 2);
// batch 2 writes key 20, which evicts 1, taking 2 along; batch 3's key 21
// evicts 2 (the oldest), now clean, without a write.
TEST(LookaheadPlannerTest, WritesBackThePageOfAnEvictedDirtyRow) {
  for (const bool window_index : {false, true}) {
    SCOPED_TRACE(window_index ? "window index" : "flat index");
    CacheConfig c = Config(Policy::kLookahead, /*slots=*/3, /*lookahead=*/0, /*key_space=*/100, /*writable=*/true);
    c.page_rows = 4;
    if (window_index) c.window_index_keys = 16;
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<CachePlanner> planner, CachePlanner::Create(c));
    const std::vector<std::vector<int64_t>> batches = {{1, 2}, {9}, {20}, {21}};
    for (const std::vector<int64_t>& b : batches) ASSERT_OK(planner->Submit(b));
    planner->Close();
    std::vector<BatchPlan> plans;
    for (size_t t = 0; t < batches.size(); ++t) {
      ASSERT_OK_AND_ASSIGN(BatchPlan p, planner->PlanNext());
      ASSERT_OK(planner->Release(p.seq, /*wrote=*/t < 3));
      plans.push_back(std::move(p));
    }
    ASSERT_EQ(plans[2].writebacks.size(), 2u);
    EXPECT_EQ(plans[2].writebacks[0].key, 1);
    EXPECT_EQ(plans[2].writebacks[1].key, 2);
    EXPECT_EQ(plans[2].writebacks[1].slot, plans[0].location[1]);
    EXPECT_TRUE(plans[3].writebacks.empty());
    ASSERT_EQ(plans[3].fetches.size(), 1u);
    EXPECT_EQ(plans[3].fetches[0].slot, plans[0].location[1]);  // key 2's slot, taken without a write
    EXPECT_EQ(planner->counters().writebacks, 2);
    EXPECT_EQ(planner->counters().page_writebacks, 1);
    ASSERT_OK_AND_ASSIGN(std::vector<SlotKey> dirty, planner->TakeDirty());
    ASSERT_EQ(dirty.size(), 2u);  // in slot order
    EXPECT_EQ(dirty[0].key, 20);
    EXPECT_EQ(dirty[1].key, 9);
  }
}

}  // namespace
}  // namespace foresight::cache::testing
