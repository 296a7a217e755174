// Edge-bucket order for partitioned embedding tables (Marius's BETA idea).
// The entities are split into P partitions; an edge (h, t) belongs to
// bucket (partition(h), partition(t)). A buffer holds C partitions in RAM;
// an edge can train only while both its partitions are resident. The plan
// is the sequence of buffer states and, at each, the buckets trained there
// (those that became coverable with the partition just loaded), so every
// bucket trains exactly once per epoch and partitions are loaded as few
// times as the construction manages.
//
// Construction (BETA): the partitions, in a seeded order, form groups of
// C - 1. Group g is made resident, then each partition of the later groups
// is swapped through the one free slot (the next group's last, so the
// switch to that group reuses it); one load covers C - 1 new partition
// pairs, the most any load can. Lower bound on loads, the larger of two
// that hold for any plan (BucketLoadsLowerBound):
//   pairs: every one of the P (P - 1) / 2 pairs must be resident together;
//     the first C loads cover C (C - 1) / 2, each later one at most C - 1:
//     C + ceil((P (P - 1) / 2 - C (C - 1) / 2) / (C - 1));
//   single loads: the partitions loaded once are resident over one
//     interval each, and those intervals meet pairwise, so they share a
//     point (Helly's theorem in one dimension) where at most C are
//     resident; the other P - C load twice or more: 2 P - C;
// or P when C >= P. The second is the larger when C is near P / 2: with P
// = 6, C = 4 it is 8, the exhaustive optimum, where pair counting says 7.
// The plan stays within 1.2x of the bound for every P <= 128 whose plan
// has at most three groups (C - 1 >= P / 3, C near P / 2 with an uneven
// last group included: at most 1.196x) and for P and C powers of two with
// C <= P / 2 (tested); with four or more groups and a short last one it
// reaches 1.203x (P = 111, C = 34).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::sampler {

struct BucketStep {
  int loaded = -1;                          // partition loaded at this step
  int evicted = -1;                         // partition it replaced, -1 while filling the buffer
  std::vector<int> resident;                // the buffer after the load (at most C, sorted)
  std::vector<std::pair<int, int>> buckets;  // (head partition, tail partition) trained here
};

struct BucketPlan {
  std::vector<BucketStep> steps;  // one per partition load
  int64_t loads() const { return static_cast<int64_t>(steps.size()); }
};

// The plan of one epoch for `num_partitions` partitions and a buffer of
// `capacity` partitions (>= 2, or >= num_partitions, which loads each
// once); `seed` and `epoch` draw the partitions' order, so epochs visit
// buckets in different orders. InvalidArgument for num_partitions < 1 or
// capacity < 2 (one resident partition cannot train a bucket across two).
StatusOr<BucketPlan> PlanBuckets(int num_partitions, int capacity, uint64_t seed, int64_t epoch);

// The lower bound above.
int64_t BucketLoadsLowerBound(int num_partitions, int capacity);

}  // namespace foresight::sampler
