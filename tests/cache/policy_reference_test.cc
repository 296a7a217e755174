// The lookahead and lru policies against slow, obviously-right simulations
// of the same trace (batches released one at a time), and lookahead <= lru.
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "cache_test_util.h"

namespace foresight::cache::testing {
namespace {

constexpr int64_t kInf = std::numeric_limits<int64_t>::max();

// (batch, position there) of the first use of `key` after batch t, or
// (kInf, kInf).
std::pair<int64_t, int64_t> NextUse(const Trace& trace, size_t t, int64_t key) {
  for (size_t u = t + 1; u < trace.size(); ++u) {
    for (size_t p = 0; p < trace[u].size(); ++p) {
      if (trace[u][p] == key) return {static_cast<int64_t>(u), static_cast<int64_t>(p)};
    }
  }
  return {kInf, kInf};
}

// Belady's MIN with bypass at batch granularity. The cache is a set of at
// most `capacity` keys. For each batch: resident keys are hits (and stay:
// the batch reads them); the misses, nearest next use first (ties by
// position in that next batch, never-used last), each enter the cache when
// it has room, or when the resident non-batch key used farthest in the
// future (never = farthest; ties: the later position in that batch) is used
// strictly later than the miss (or both are never used again), which it
// then replaces; otherwise bypass.
int64_t BeladyMisses(const Trace& trace, int64_t capacity) {
  std::set<int64_t> cache;
  int64_t misses = 0;
  for (size_t t = 0; t < trace.size(); ++t) {
    const std::set<int64_t> batch(trace[t].begin(), trace[t].end());
    std::vector<std::pair<std::pair<int64_t, int64_t>, int64_t>> miss;  // (next use, key)
    for (int64_t k : trace[t]) {
      if (!cache.count(k)) miss.push_back({NextUse(trace, t, k), k});
    }
    misses += static_cast<int64_t>(miss.size());
    std::stable_sort(miss.begin(), miss.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (auto& [next, key] : miss) {
      if (static_cast<int64_t>(cache.size()) < capacity) {
        cache.insert(key);
        continue;
      }
      int64_t victim = -1;
      std::pair<int64_t, int64_t> far{-1, -1};
      for (int64_t r : cache) {
        if (batch.count(r)) continue;
        const auto n = NextUse(trace, t, r);
        if (n > far) {
          far = n;
          victim = r;
        }
      }
      if (victim >= 0 && (far.first > next.first || far.first == kInf)) {
        cache.erase(victim);
        cache.insert(key);
      }
    }
  }
  return misses;
}

// LRU with bypass at batch granularity: a key's recency is (last batch that
// used it, its position there); misses in batch order take room or replace
// the least recent resident key not in the batch, else bypass.
int64_t LruMisses(const Trace& trace, int64_t capacity) {
  std::map<int64_t, std::pair<int64_t, int64_t>> cache;  // key -> recency
  int64_t misses = 0;
  for (size_t t = 0; t < trace.size(); ++t) {
    const std::set<int64_t> batch(trace[t].begin(), trace[t].end());
    for (int64_t k : trace[t]) {
      if (cache.count(k)) continue;
      ++misses;
      if (static_cast<int64_t>(cache.size()) < capacity) {
        cache[k] = {-1, -1};
        continue;
      }
      int64_t victim = -1;
      std::pair<int64_t, int64_t> oldest{kInf, kInf};
      for (auto& [r, rec] : cache) {
        if (!batch.count(r) && rec < oldest) {
          oldest = rec;
          victim = r;
        }
      }
      if (victim < 0) continue;
      cache.erase(victim);
      cache[k] = {-1, -1};
    }
    for (size_t p = 0; p < trace[t].size(); ++p) {
      auto it = cache.find(trace[t][p]);
      if (it != cache.end()) it->second = {static_cast<int64_t>(t), static_cast<int64_t>(p)};
    }
  }
  return misses;
}

struct NamedTrace {
  std::string name;
  Trace trace;
  int64_t keys;
};

std::vector<NamedTrace> Traces() {
  return {
      {"uniform", UniformTrace(40, 24, 200, 1), 200},
      {"zipf", ZipfTrace(40, 24, 300, 1.1, 2), 300},
      {"neighbourhood", NeighbourhoodTrace(40, 24, 400, 3), 400},
      {"uniform_small", UniformTrace(30, 10, 40, 4), 40},
  };
}

int64_t DistinctKeys(const Trace& t) {
  std::set<int64_t> s;
  for (auto& b : t) s.insert(b.begin(), b.end());
  return static_cast<int64_t>(s.size());
}

TEST(LookaheadPolicy, EqualsBeladyWhenTheWindowCoversTheTrace) {
  for (const NamedTrace& nt : Traces()) {
    const int64_t distinct = DistinctKeys(nt.trace);
    for (int64_t capacity : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{23}, int64_t{24}, int64_t{40}, int64_t{90},
                             distinct, distinct + 10}) {
      for (int64_t key_space : {nt.keys, int64_t{0}}) {
        SCOPED_TRACE(nt.name + " capacity " + std::to_string(capacity) + " key_space " + std::to_string(key_space));
        const CacheConfig c = Config(Policy::kLookahead, capacity, static_cast<int>(nt.trace.size()), key_space);
        ASSERT_OK_AND_ASSIGN(RunResult r, RunTrace(c, nt.trace, /*depth=*/1));
        EXPECT_EQ(r.counters.misses, BeladyMisses(nt.trace, capacity));
        int64_t total = 0;
        for (auto& b : nt.trace) total += static_cast<int64_t>(b.size());
        EXPECT_EQ(r.counters.hits + r.counters.misses, total);
        EXPECT_EQ(r.counters.fetches + r.counters.bypassed, r.counters.misses);
        if (capacity >= distinct) {
          EXPECT_EQ(r.counters.misses, distinct);
          EXPECT_EQ(r.counters.evictions, 0);
        }
      }
    }
  }
}

TEST(LruPolicy, EqualsTheLruSimulation) {
  for (const NamedTrace& nt : Traces()) {
    for (int64_t capacity : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{24}, int64_t{60}, int64_t{1000}}) {
      SCOPED_TRACE(nt.name + " capacity " + std::to_string(capacity));
      ASSERT_OK_AND_ASSIGN(RunResult r, RunTrace(Config(Policy::kLru, capacity, 3, nt.keys), nt.trace, 1));
      EXPECT_EQ(r.counters.misses, LruMisses(nt.trace, capacity));
    }
  }
}

TEST(LookaheadPolicy, NeverMissesMoreThanLru) {
  for (const NamedTrace& nt : Traces()) {
    for (int64_t capacity : {int64_t{0}, int64_t{1}, int64_t{12}, int64_t{30}, int64_t{60}, int64_t{120}}) {
      for (int window : {2, 4, 8, 16, 100}) {
        for (int depth : {1, 2}) {
          SCOPED_TRACE(nt.name + " capacity " + std::to_string(capacity) + " window " + std::to_string(window) +
                       " depth " + std::to_string(depth));
          ASSERT_OK_AND_ASSIGN(RunResult la, RunTrace(Config(Policy::kLookahead, capacity, window, nt.keys), nt.trace, depth));
          ASSERT_OK_AND_ASSIGN(RunResult lru, RunTrace(Config(Policy::kLru, capacity, window, nt.keys), nt.trace, depth));
          EXPECT_LE(la.counters.misses, lru.counters.misses);
        }
      }
    }
  }
}

}  // namespace
}  // namespace foresight::cache::testing
