// Shared helpers for the cache planner tests: synthetic key traces and a
// driver that runs a planner over a trace with a fixed pipeline depth.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "foresight/cache/cache_planner.h"
#include "testing/testing.h"

namespace foresight::cache::testing {

using Trace = std::vector<std::vector<int64_t>>;

inline double Uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// `batches` batches of `batch` distinct keys drawn uniformly from [0, keys).
inline Trace UniformTrace(int batches, int batch, int64_t keys, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Trace t(batches);
  for (auto& b : t) {
    std::unordered_set<int64_t> seen;
    while (static_cast<int>(b.size()) < batch) {
      const int64_t k = static_cast<int64_t>(rng() % static_cast<uint64_t>(keys));
      if (seen.insert(k).second) b.push_back(k);
    }
  }
  return t;
}

// Zipf(s) popularity over a random permutation of [0, keys).
inline Trace ZipfTrace(int batches, int batch, int64_t keys, double s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> cdf(keys);
  double sum = 0;
  for (int64_t r = 0; r < keys; ++r) cdf[r] = (sum += 1.0 / std::pow(static_cast<double>(r + 1), s));
  std::vector<int64_t> perm(keys);
  for (int64_t i = 0; i < keys; ++i) perm[i] = i;
  for (int64_t i = keys - 1; i > 0; --i) std::swap(perm[i], perm[rng() % static_cast<uint64_t>(i + 1)]);
  Trace t(batches);
  for (auto& b : t) {
    std::unordered_set<int64_t> seen;
    while (static_cast<int>(b.size()) < batch) {
      const double u = Uniform01(rng) * sum;
      const int64_t r = std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
      const int64_t k = perm[std::min<int64_t>(r, keys - 1)];
      if (seen.insert(k).second) b.push_back(k);
    }
  }
  return t;
}

// Like mini-batches of a partitioned graph: a few seeds whose region drifts
// slowly from batch to batch, each with neighbours close to it, plus a few
// random far neighbours.
inline Trace NeighbourhoodTrace(int batches, int batch, int64_t keys, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Trace t(batches);
  int64_t centre = 0;
  for (auto& b : t) {
    std::unordered_set<int64_t> seen;
    centre = (centre + static_cast<int64_t>(rng() % 7)) % keys;
    while (static_cast<int>(b.size()) < batch) {
      int64_t k;
      const uint64_t kind = rng() % 10;
      if (kind < 7) {
        k = (centre + static_cast<int64_t>(rng() % 24)) % keys;
      } else if (kind < 9) {
        k = (centre + static_cast<int64_t>(rng() % 96)) % keys;
      } else {
        k = static_cast<int64_t>(rng() % static_cast<uint64_t>(keys));
      }
      if (seen.insert(k).second) b.push_back(k);
    }
  }
  return t;
}

inline CacheConfig Config(Policy p, int64_t slots, int lookahead, int64_t key_space, bool writable = false) {
  CacheConfig c;
  c.policy = p;
  c.row_bytes = 16;
  c.capacity_bytes = slots * 16 + 7;  // a partial row does not make a slot
  c.lookahead = lookahead;
  c.key_space = key_space;
  c.writable = writable;
  return c;
}

// Keys by access frequency in the trace (most used first, ties by key).
inline std::vector<int64_t> ByFrequency(const Trace& trace) {
  std::unordered_map<int64_t, int64_t> count;
  for (const auto& b : trace)
    for (int64_t k : b) ++count[k];
  std::vector<std::pair<int64_t, int64_t>> v(count.begin(), count.end());
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  std::vector<int64_t> out;
  for (auto& [k, c] : v) out.push_back(k);
  return out;
}

struct RunResult {
  std::vector<BatchPlan> plans;
  CacheCounters counters;
};

// Runs the whole trace: keys are submitted only as the window needs them,
// batch t is planned right after Release(t - depth) (depth batches in
// flight at most), releases in order. `static_keys` go to the static policy
// and to a lookahead's static tier (hot_slots > 0).
inline StatusOr<RunResult> RunTrace(const CacheConfig& config, const Trace& trace, int depth,
                                    const std::vector<int64_t>& static_keys = {}, bool wrote = false) {
  FS_ASSIGN_OR_RETURN(auto planner, CachePlanner::Create(config));
  if (config.policy == Policy::kStatic || config.hot_slots > 0) {
    FS_RETURN_IF_ERROR(planner->SetStaticKeys(static_keys));
  }
  RunResult r;
  size_t submitted = 0;
  int64_t released = 0;
  while (r.plans.size() < trace.size()) {
    while (!planner->CanPlan()) {
      if (submitted == trace.size()) return Internal("cannot plan after Close");
      FS_RETURN_IF_ERROR(planner->Submit(trace[submitted++]));
      if (submitted == trace.size()) planner->Close();
    }
    if (planner->in_flight() == depth) FS_RETURN_IF_ERROR(planner->Release(released++, wrote));
    FS_ASSIGN_OR_RETURN(BatchPlan p, planner->PlanNext());
    r.plans.push_back(std::move(p));
  }
  while (released < static_cast<int64_t>(trace.size())) FS_RETURN_IF_ERROR(planner->Release(released++, wrote));
  r.counters = planner->counters();
  return r;
}

// Replays plans in order with `depth` in flight, tracking what each slot
// holds, and checks every plan against it: located keys are either fetched
// by the plan or already in their slot; fetched and written-back slots are
// not used by any batch in flight; bypass lists exactly the unlocated keys.
inline void CheckPlans(const RunResult& r, const Trace& trace, int depth, int64_t num_slots) {
  std::map<int64_t, int64_t> holds;       // slot -> key
  std::map<int64_t, std::set<int64_t>> in_flight;  // seq -> slots
  for (size_t t = 0; t < r.plans.size(); ++t) {
    const BatchPlan& p = r.plans[t];
    SCOPED_TRACE("plan " + std::to_string(t));
    if (static_cast<int>(in_flight.size()) == depth) in_flight.erase(in_flight.begin());
    std::set<int64_t> pinned;
    for (auto& [s, slots] : in_flight) pinned.insert(slots.begin(), slots.end());
    ASSERT_EQ(p.seq, static_cast<int64_t>(t));
    ASSERT_EQ(p.keys, trace[t]);
    ASSERT_EQ(p.location.size(), p.keys.size());
    for (const SlotKey& wb : p.writebacks) {
      EXPECT_EQ(holds[wb.slot], wb.key);
      EXPECT_FALSE(pinned.count(wb.slot)) << "wrote back pinned slot " << wb.slot;
    }
    std::map<int64_t, int64_t> fetched;  // slot -> key
    for (const SlotKey& f : p.fetches) {
      EXPECT_FALSE(pinned.count(f.slot)) << "slot " << f.slot << " of a batch in flight was reassigned";
      EXPECT_TRUE(fetched.emplace(f.slot, f.key).second) << "slot " << f.slot << " fetched twice";
      holds[f.slot] = f.key;
    }
    std::set<int64_t> used;
    std::vector<int64_t> bypass;
    int64_t hits = 0;
    for (size_t i = 0; i < p.keys.size(); ++i) {
      const int64_t s = p.location[i];
      if (s == kBypass) {
        bypass.push_back(static_cast<int64_t>(i));
        continue;
      }
      ASSERT_GE(s, 0);
      ASSERT_LT(s, num_slots);
      EXPECT_TRUE(used.insert(s).second) << "slot " << s << " used twice in one plan";
      EXPECT_EQ(holds[s], p.keys[i]) << "key " << p.keys[i] << " located in slot " << s;
      if (!fetched.count(s)) ++hits;
    }
    EXPECT_EQ(p.bypass, bypass);
    EXPECT_EQ(p.hits, hits);
    EXPECT_EQ(p.misses, static_cast<int64_t>(p.keys.size()) - hits);
    in_flight[p.seq] = used;
  }
}

}  // namespace foresight::cache::testing
