// cache_bench: planning throughput of each cache policy and their miss
// ratios on a synthetic skewed trace (Zipf popularity over a shuffled key
// space, 25k distinct keys per batch, cache = 10% of the keys), plus the
// sparse-key hash map against std::unordered_map. Prints one JSON object.
//
//   cache_bench [batches=240] [zipf_s=0.9]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../cache/src/key_map.h"
#include "foresight/cache/cache_planner.h"

namespace fc = foresight::cache;
using Trace = std::vector<std::vector<int64_t>>;

namespace {

constexpr int64_t kKeySpace = 1000000;
constexpr int kBatch = 25000;
constexpr int64_t kRowBytes = 512;

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
// CPU time of this thread: the machine may be shared, and planning is one
// thread, so keys per CPU-second is the figure that does not depend on load.
double CpuNow() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

Trace MakeTrace(int batches, double s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> cdf(kKeySpace);
  double sum = 0;
  for (int64_t r = 0; r < kKeySpace; ++r) cdf[r] = (sum += std::pow(static_cast<double>(r + 1), -s));
  std::vector<int64_t> perm(kKeySpace);
  for (int64_t i = 0; i < kKeySpace; ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<uint32_t> seen(kKeySpace, 0);
  Trace t(batches);
  for (int b = 0; b < batches; ++b) {
    while (static_cast<int>(t[b].size()) < kBatch) {
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53 * sum;
      const int64_t r = std::min<int64_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin(), kKeySpace - 1);
      const int64_t k = perm[r];
      if (seen[k] == static_cast<uint32_t>(b + 1)) continue;
      seen[k] = b + 1;
      t[b].push_back(k);
    }
  }
  return t;
}

std::vector<int64_t> ByFrequency(const Trace& trace) {
  std::vector<int64_t> count(kKeySpace, 0);
  for (const auto& b : trace)
    for (int64_t k : b) ++count[k];
  std::vector<int64_t> keys(kKeySpace);
  for (int64_t i = 0; i < kKeySpace; ++i) keys[i] = i;
  std::stable_sort(keys.begin(), keys.end(), [&](int64_t a, int64_t b) { return count[a] > count[b]; });
  return keys;
}

struct Result {
  double keys_per_s = 0;      // wall clock
  double keys_per_cpu_s = 0;  // thread CPU time
  fc::CacheCounters counters;
};

// Submit + PlanNext + Release of the whole trace, two batches in flight.
Result Run(fc::Policy policy, int window, int64_t key_space, const Trace& trace, const std::vector<int64_t>& order) {
  fc::CacheConfig c;
  c.policy = policy;
  c.row_bytes = kRowBytes;
  c.capacity_bytes = kKeySpace / 10 * kRowBytes;
  c.lookahead = window;
  c.key_space = key_space;
  auto created = fc::CachePlanner::Create(c);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
    std::exit(1);
  }
  auto planner = std::move(created).value();
  if (policy == fc::Policy::kStatic) {
    if (!planner->SetStaticKeys(order).ok()) std::exit(1);
  }
  Trace copy = trace;  // Submit takes ownership; copying is not planning
  int64_t keys = 0, released = 0;
  size_t submitted = 0;
  const double t0 = Now(), c0 = CpuNow();
  for (size_t t = 0; t < trace.size(); ++t) {
    while (!planner->CanPlan()) {
      if (!planner->Submit(std::move(copy[submitted++])).ok()) std::exit(1);
      if (submitted == trace.size()) planner->Close();
    }
    if (planner->in_flight() == 2 && !planner->Release(released++, false).ok()) std::exit(1);
    auto plan = planner->PlanNext();
    if (!plan.ok()) {
      std::fprintf(stderr, "%s\n", plan.status().ToString().c_str());
      std::exit(1);
    }
    keys += static_cast<int64_t>(plan->keys.size());
  }
  while (released < static_cast<int64_t>(trace.size())) {
    if (!planner->Release(released++, false).ok()) std::exit(1);
  }
  Result r;
  r.keys_per_s = static_cast<double>(keys) / (Now() - t0);
  r.keys_per_cpu_s = static_cast<double>(keys) / (CpuNow() - c0);
  r.counters = planner->counters();
  return r;
}

// ns per operation: find-or-insert of n random keys, then n lookups.
template <typename F>
double TimeNs(int64_t ops, F&& f) {
  const double t0 = Now();
  f();
  return (Now() - t0) * 1e9 / static_cast<double>(ops);
}

}  // namespace

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 240;
  const double s = argc > 2 ? std::atof(argv[2]) : 0.9;
  const Trace trace = MakeTrace(batches, s, 42);
  const std::vector<int64_t> order = ByFrequency(trace);
  std::string json = "{\"bench\":\"cache_planner\",\"batches\":" + std::to_string(batches) +
                     ",\"keys_per_batch\":" + std::to_string(kBatch) + ",\"key_space\":" +
                     std::to_string(kKeySpace) + ",\"zipf_s\":" + std::to_string(s) + ",\"capacity_rows\":" +
                     std::to_string(kKeySpace / 10) + ",\"pipeline_depth\":2,\"runs\":[";
  bool first = true;
  for (int window : {8, 64}) {
    Result by[3];
    for (fc::Policy p : {fc::Policy::kLookahead, fc::Policy::kLru, fc::Policy::kStatic}) {
      for (int64_t ks : {kKeySpace, int64_t{0}}) {
        const Result r = Run(p, window, ks, trace, order);
        if (ks > 0) by[static_cast<int>(p)] = r;
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "%s{\"policy\":\"%s\",\"window\":%d,\"keys\":\"%s\",\"keys_per_s\":%.4g,\"keys_per_cpu_s\":%.4g,\"hits\":%lld,"
                      "\"misses\":%lld,\"miss_ratio\":%.4f,\"evictions\":%lld}",
                      first ? "" : ",", fc::PolicyName(p), window, ks > 0 ? "dense" : "sparse", r.keys_per_s, r.keys_per_cpu_s,
                      static_cast<long long>(r.counters.hits), static_cast<long long>(r.counters.misses),
                      static_cast<double>(r.counters.misses) / static_cast<double>(r.counters.hits + r.counters.misses),
                      static_cast<long long>(r.counters.evictions));
        json += buf;
        first = false;
      }
    }
    char buf[256];
    std::snprintf(buf, sizeof buf, ",{\"window\":%d,\"misses_lookahead_over_lru\":%.4f,\"misses_lookahead_over_static\":%.4f}",
                  window, static_cast<double>(by[0].counters.misses) / static_cast<double>(by[1].counters.misses),
                  static_cast<double>(by[0].counters.misses) / static_cast<double>(by[2].counters.misses));
    json += buf;
  }
  json += "]";

  // The sparse key map against std::unordered_map (reserved), 2M keys.
  {
    const int64_t n = 2000000;
    std::mt19937_64 rng(7);
    std::vector<int64_t> keys(n);
    for (auto& k : keys) k = static_cast<int64_t>(rng() >> 20);
    std::vector<int64_t> probe = keys;
    std::shuffle(probe.begin(), probe.end(), rng);
    struct V {
      int32_t a, b, c, d, e, f;
    };
    int64_t sink = 0;
    foresight::cache::internal::SparseKeyMap<V> ours(n);
    const double ours_insert = TimeNs(n, [&] { for (int64_t k : keys) ours.FindOrInsert(k).a += 1; });
    const double ours_find = TimeNs(n, [&] { for (int64_t k : probe) sink += ours.Find(k)->a; });
    std::unordered_map<int64_t, V> std_map;
    std_map.reserve(n);
    const double std_insert = TimeNs(n, [&] { for (int64_t k : keys) std_map[k].a += 1; });
    const double std_find = TimeNs(n, [&] { for (int64_t k : probe) sink += std_map.find(k)->second.a; });
    char buf[384];
    std::snprintf(buf, sizeof buf,
                  ",\"hash_map_2M_keys_ns_per_op\":{\"sparse_key_map\":{\"insert\":%.1f,\"find\":%.1f},"
                  "\"std_unordered_map\":{\"insert\":%.1f,\"find\":%.1f},\"checksum\":%lld}",
                  ours_insert, ours_find, std_insert, std_find, static_cast<long long>(sink));
    json += buf;
  }
  json += "}";
  std::printf("%s\n", json.c_str());
  return 0;
}
