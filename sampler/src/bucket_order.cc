// PlanBuckets and BucketLoadsLowerBound (bucket_order.h).
#include "foresight/sampler/bucket_order.h"

#include <algorithm>
#include <string>

#include "foresight/core/rng.h"

namespace foresight::sampler {
namespace {

constexpr uint64_t kBucketStream = 0x4255434B4F524452ull;  // "BUCKORDR"

// The buffer and the pairs it has made coverable so far.
class Buffer {
 public:
  Buffer(int partitions, int capacity)
      : capacity_(capacity), covered_(static_cast<size_t>(partitions) * partitions, 0), partitions_(partitions) {}

  bool Resident(int x) const { return std::find(resident_.begin(), resident_.end(), x) != resident_.end(); }
  bool Covered(int a, int b) const { return covered_[static_cast<size_t>(a) * partitions_ + b] != 0; }

  // Loads x (if absent), evicting the oldest resident partition not in
  // `keep` when full; records the step and the buckets it makes trainable.
  void Load(int x, const std::vector<int>& keep, BucketPlan* plan) {
    if (Resident(x)) return;
    BucketStep step;
    step.loaded = x;
    if (static_cast<int>(resident_.size()) >= capacity_) {
      for (auto it = resident_.begin(); it != resident_.end(); ++it) {
        if (std::find(keep.begin(), keep.end(), *it) == keep.end()) {
          step.evicted = *it;
          resident_.erase(it);
          break;
        }
      }
    }
    resident_.push_back(x);
    for (int b : resident_) {
      for (const auto& [u, v] : {std::make_pair(x, b), std::make_pair(b, x)}) {
        if (!Covered(u, v)) {
          covered_[static_cast<size_t>(u) * partitions_ + v] = 1;
          step.buckets.emplace_back(u, v);
        }
      }
    }
    step.resident = resident_;
    std::sort(step.resident.begin(), step.resident.end());
    plan->steps.push_back(std::move(step));
  }

 private:
  int capacity_;
  std::vector<char> covered_;  // [P * P] ordered pairs
  int partitions_;
  std::vector<int> resident_;  // load order (the oldest first)
};

}  // namespace

int64_t BucketLoadsLowerBound(int p, int c) {
  if (c >= p) return p;
  // Pair counting: the first c loads cover c (c - 1) / 2 pairs, each later
  // one at most c - 1.
  const int64_t pairs = static_cast<int64_t>(p) * (p - 1) / 2 - static_cast<int64_t>(c) * (c - 1) / 2;
  const int64_t by_pairs = c + (pairs + c - 2) / (c - 1);
  // Partitions loaded once: each is resident over one interval of the plan,
  // and every two of them must be resident together, so their intervals
  // meet pairwise and hence all share a point (Helly's theorem on a line),
  // where at most c are resident. So at most c partitions load once and the
  // other p - c load at least twice.
  const int64_t by_single_loads = 2 * static_cast<int64_t>(p) - c;
  return std::max(by_pairs, by_single_loads);
}

StatusOr<BucketPlan> PlanBuckets(int p, int c, uint64_t seed, int64_t epoch) {
  if (p < 1) return InvalidArgument("bucket order: needs at least 1 partition, got " + std::to_string(p));
  if (c < 2 && p > 1) {
    return InvalidArgument("bucket order: a buffer of " + std::to_string(c) +
                           " partitions cannot hold the two partitions of a bucket (need >= 2)");
  }
  // The partitions in a seeded order (Fisher-Yates, one draw a position).
  std::vector<int> order(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) order[static_cast<size_t>(i)] = i;
  const RngKey key = RngKey::FromSeed(seed).Fold(kBucketStream).Fold(static_cast<uint64_t>(epoch));
  for (int i = p - 1; i > 0; --i) {
    const int j = static_cast<int>(key.Below(static_cast<uint64_t>(i + 1), static_cast<uint64_t>(i), 0));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  BucketPlan plan;
  Buffer buffer(p, std::min(c, p));
  if (c >= p) {
    for (int x : order) buffer.Load(x, order, &plan);
    return plan;
  }
  const int k = c - 1;
  std::vector<std::vector<int>> groups;
  for (int s = 0; s < p; s += k) groups.emplace_back(order.begin() + s, order.begin() + std::min(p, s + k));
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<int>& fixed = groups[g];
    for (int x : fixed) buffer.Load(x, fixed, &plan);
    // Sweep the later groups through the free slot, the next group last so
    // its partitions are partly resident when it becomes the fixed group.
    std::vector<int> sweep;
    for (size_t h = g + 2; h < groups.size(); ++h) sweep.insert(sweep.end(), groups[h].begin(), groups[h].end());
    if (g + 1 < groups.size()) sweep.insert(sweep.end(), groups[g + 1].begin(), groups[g + 1].end());
    for (int x : sweep) {
      bool needed = false;
      for (int f : fixed) needed = needed || !buffer.Covered(x, f);
      if (needed) buffer.Load(x, fixed, &plan);
    }
  }
  return plan;
}

}  // namespace foresight::sampler
