// PartitionOrder: every id once per epoch, seeds group after group and inside
// their batch's resident partitions, the same batch count every epoch,
// determinism by (seed, epoch) and random access, partition order, group
// composition and within-group order varying by epoch, concurrent use,
// errors; ParseOrderKind / ParseSamplingScope; ResidentMask.
#include "foresight/sampler/partition_order.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "foresight/sampler/resident_mask.h"
#include "testing/testing.h"

namespace foresight::sampler {
namespace {

std::vector<int64_t> Vec(const Tensor& t) { return testing::VectorOf<int64_t>(t); }

Tensor I64(const std::vector<int64_t>& v) { return testing::TensorOf(v); }

int PartitionOf(const std::vector<int64_t>& offsets, int64_t id) {
  for (size_t p = 0; p + 1 < offsets.size(); ++p) {
    if (id >= offsets[p] && id < offsets[p + 1]) return static_cast<int>(p);
  }
  return -1;
}

// 10 partitions of uneven sizes (one empty), 3 per group; training ids: a
// random 60% of the rows, in random order.
struct PartitionedIds {
  std::vector<int64_t> offsets{0, 40, 45, 45, 130, 160, 161, 260, 300, 340, 400};
  std::vector<int64_t> ids;
  PartitionedIds() {
    std::mt19937_64 rng(3);
    for (int64_t v = 0; v < offsets.back(); ++v) {
      if (rng() % 10 < 6) ids.push_back(v);
    }
    std::shuffle(ids.begin(), ids.end(), rng);
  }
};

TEST(PartitionOrder, BatchesCoverEveryIdOnceInsideTheirGroups) {
  const PartitionedIds s;
  const int64_t kBatch = 7;
  const int kGroup = 3;
  PartitionOrder order(I64(s.ids), s.offsets, kBatch, 11, kGroup);
  ASSERT_OK(order.status());
  EXPECT_EQ(order.num_partitions(), 10);
  EXPECT_EQ(order.num_groups(), 4);
  const int64_t n = static_cast<int64_t>(s.ids.size());
  EXPECT_EQ(order.num_batches(), (n + kBatch - 1) / kBatch);

  std::vector<int64_t> sorted_ids = s.ids;
  std::sort(sorted_ids.begin(), sorted_ids.end());
  for (int64_t epoch = 0; epoch < 5; ++epoch) {
    // The groups split the partitions: K each, the last smaller.
    std::vector<int> place_of_part(10, -1);
    for (int g = 0; g < order.num_groups(); ++g) {
      const std::vector<int> parts = order.GroupPartitions(epoch, g);
      EXPECT_EQ(parts.size(), g < 3 ? 3u : 1u) << "epoch " << epoch << " group " << g;
      EXPECT_TRUE(std::is_sorted(parts.begin(), parts.end()));
      for (int p : parts) {
        ASSERT_EQ(place_of_part[p], -1) << "partition " << p << " in two groups";
        place_of_part[p] = g;
      }
    }
    for (int p = 0; p < 10; ++p) ASSERT_GE(place_of_part[p], 0) << "partition " << p << " in no group";
    EXPECT_TRUE(order.GroupPartitions(epoch, 4).empty());
    EXPECT_TRUE(order.GroupPartitions(epoch, -1).empty());

    std::vector<int64_t> all;
    int last_place = 0;
    for (int64_t b = 0; b < order.num_batches(); ++b) {
      const Tensor t = order.Batch(epoch, b);
      ASSERT_TRUE(t.defined());
      ASSERT_EQ(t.dtype(), DType::kI64);
      const std::vector<int64_t> batch = Vec(t);
      EXPECT_EQ(static_cast<int64_t>(batch.size()), std::min(kBatch, n - b * kBatch)) << "batch " << b;
      const auto [first, last] = order.BatchGroups(epoch, b);
      ASSERT_GE(first, 0);
      ASSERT_LE(first, last);
      std::vector<int> want_parts;
      for (int g = first; g <= last; ++g) {
        const std::vector<int> parts = order.GroupPartitions(epoch, g);
        want_parts.insert(want_parts.end(), parts.begin(), parts.end());
      }
      std::sort(want_parts.begin(), want_parts.end());
      const std::vector<int> parts = order.ResidentPartitions(epoch, b);
      EXPECT_EQ(parts, want_parts) << "epoch " << epoch << " batch " << b;
      // Seeds go group after group: their places never decrease, and the
      // batch's first and last seeds are in its first and last groups.
      for (size_t i = 0; i < batch.size(); ++i) {
        const int place = place_of_part[PartitionOf(s.offsets, batch[i])];
        ASSERT_GE(place, last_place) << "epoch " << epoch << " batch " << b << ": seed " << batch[i]
                                     << " goes back to an earlier group";
        last_place = place;
        if (i == 0) {
          EXPECT_EQ(place, first) << "epoch " << epoch << " batch " << b;
        }
        if (i + 1 == batch.size()) {
          EXPECT_EQ(place, last) << "epoch " << epoch << " batch " << b;
        }
      }
      all.insert(all.end(), batch.begin(), batch.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, sorted_ids) << "epoch " << epoch;
  }
  EXPECT_FALSE(order.Batch(0, order.num_batches()).defined());
  EXPECT_FALSE(order.Batch(0, -1).defined());
  EXPECT_EQ(order.BatchGroups(0, -1), std::make_pair(-1, -1));
  EXPECT_TRUE(order.ResidentPartitions(0, order.num_batches()).empty());
}

std::vector<std::vector<int64_t>> AllBatches(const PartitionOrder& order, int64_t epoch) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t b = 0; b < order.num_batches(); ++b) out.push_back(Vec(order.Batch(epoch, b)));
  return out;
}

TEST(PartitionOrder, DeterministicBySeedAndEpochWithRandomAccess) {
  const PartitionedIds s;
  PartitionOrder a(I64(s.ids), s.offsets, 5, 42, 2);
  PartitionOrder b(I64(s.ids), s.offsets, 5, 42, 2);
  PartitionOrder other_seed(I64(s.ids), s.offsets, 5, 43, 2);
  ASSERT_OK(a.status());
  const auto e0 = AllBatches(a, 0), e1 = AllBatches(a, 1), e2 = AllBatches(a, 2);
  // Out of order, evicting and recomputing epochs: same batches.
  EXPECT_EQ(AllBatches(b, 2), e2);
  EXPECT_EQ(AllBatches(b, 0), e0);
  EXPECT_EQ(AllBatches(b, 1), e1);
  EXPECT_EQ(AllBatches(a, 0), e0);
  EXPECT_EQ(Vec(b.Batch(2, 3)), e2[3]);
  EXPECT_NE(e0, e1);
  EXPECT_NE(AllBatches(other_seed, 0), e0);
  // A view handed out earlier keeps its bytes when its epoch is evicted.
  const Tensor kept = a.Batch(0, 0);
  for (int64_t e = 3; e < 6; ++e) AllBatches(a, e);
  EXPECT_EQ(Vec(kept), e0[0]);
}

// `parts` partitions of `rows` rows each, every row a training id.
struct EvenPartitions {
  std::vector<int64_t> offsets, ids;
  EvenPartitions(int parts, int64_t rows) {
    for (int p = 0; p <= parts; ++p) offsets.push_back(rows * p);
    for (int64_t v = 0; v < rows * parts; ++v) ids.push_back(v);
  }
};

TEST(PartitionOrder, PartitionOrderAndWithinGroupOrderVaryByEpoch) {
  // 16 partitions of 50 rows, one per group, one batch each.
  const EvenPartitions s(16, 50);
  const std::vector<int64_t>& offsets = s.offsets;
  PartitionOrder order(I64(s.ids), offsets, 50, 5, 1);
  ASSERT_OK(order.status());
  ASSERT_EQ(order.num_batches(), 16);
  auto part_of_batch = [&](int64_t e, int64_t b) {
    EXPECT_EQ(order.BatchGroups(e, b), std::make_pair(static_cast<int>(b), static_cast<int>(b)));
    const std::vector<int> parts = order.ResidentPartitions(e, b);
    EXPECT_EQ(parts.size(), 1u);
    return parts.empty() ? -1 : parts[0];
  };
  std::set<std::vector<int>> sequences;
  std::map<int, int> first_count;
  const int kEpochs = 400;
  for (int64_t e = 0; e < kEpochs; ++e) {
    std::vector<int> seq;
    for (int64_t b = 0; b < 16; ++b) {
      seq.push_back(part_of_batch(e, b));
      for (int64_t id : Vec(order.Batch(e, b))) ASSERT_EQ(PartitionOf(offsets, id), seq.back());
    }
    std::vector<int> sorted = seq;
    std::sort(sorted.begin(), sorted.end());
    for (int p = 0; p < 16; ++p) ASSERT_EQ(sorted[p], p);
    sequences.insert(seq);
    ++first_count[seq[0]];
    if (e < 3) {
      // Within a group the ids are shuffled (not in train_ids order), and
      // differently in the next epoch.
      const std::vector<int64_t> batch = Vec(order.Batch(e, 0));
      EXPECT_FALSE(std::is_sorted(batch.begin(), batch.end())) << "epoch " << e;
      bool found = false;
      for (int64_t b = 0; b < 16; ++b) {
        if (part_of_batch(e + 1, b) == seq[0]) {
          EXPECT_NE(Vec(order.Batch(e + 1, b)), batch) << "partition " << seq[0] << " in epochs " << e << ", " << e + 1;
          found = true;
        }
      }
      EXPECT_TRUE(found);
    }
  }
  EXPECT_EQ(sequences.size(), static_cast<size_t>(kEpochs)) << "partition orders repeat";
  // The first partition is uniform over 16 (25 expected each; a loose band).
  EXPECT_EQ(first_count.size(), 16u);
  for (const auto& [p, count] : first_count) {
    EXPECT_GT(count, 5) << "partition " << p;
    EXPECT_LT(count, 55) << "partition " << p;
  }
}

TEST(PartitionOrder, GroupsAreRedrawnEveryEpoch) {
  // 12 partitions in groups of 4: which partitions share a group changes
  // from epoch to epoch (fixed groups would train the same label mix
  // together every epoch when partitions follow the classes).
  const EvenPartitions s(12, 10);
  PartitionOrder order(I64(s.ids), s.offsets, 8, 9, 4);
  ASSERT_OK(order.status());
  ASSERT_EQ(order.num_groups(), 3);
  std::set<std::vector<int>> groups_seen;
  std::map<std::pair<int, int>, int> together;  // partition pairs sharing a group
  const int kEpochs = 200;
  for (int64_t e = 0; e < kEpochs; ++e) {
    for (int g = 0; g < 3; ++g) {
      const std::vector<int> parts = order.GroupPartitions(e, g);
      ASSERT_EQ(parts.size(), 4u);
      groups_seen.insert(parts);
      for (int a : parts) {
        for (int b : parts) {
          if (a < b) ++together[{a, b}];
        }
      }
    }
  }
  EXPECT_GT(groups_seen.size(), 100u);
  // Each pair shares a group with probability 3/11 (about 55 of 200).
  EXPECT_EQ(together.size(), 66u);
  for (const auto& [pair, count] : together) {
    EXPECT_GT(count, 25) << pair.first << "," << pair.second;
    EXPECT_LT(count, 90) << pair.first << "," << pair.second;
  }
}

TEST(PartitionOrder, OneGroupHoldsEveryPartition) {
  const PartitionedIds s;
  PartitionOrder order(I64(s.ids), s.offsets, 16, 1, 100);
  ASSERT_OK(order.status());
  EXPECT_EQ(order.num_groups(), 1);
  EXPECT_EQ(order.num_batches(), (static_cast<int64_t>(s.ids.size()) + 15) / 16);
  const std::vector<int> parts = order.ResidentPartitions(3, 0);
  ASSERT_EQ(parts.size(), 10u);
  for (int p = 0; p < 10; ++p) EXPECT_EQ(parts[p], p);
}

TEST(PartitionOrder, ConcurrentCallersSeeTheSequentialBatches) {
  const PartitionedIds s;
  PartitionOrder order(I64(s.ids), s.offsets, 9, 8, 2);
  PartitionOrder reference(I64(s.ids), s.offsets, 9, 8, 2);
  ASSERT_OK(order.status());
  std::vector<std::vector<std::vector<int64_t>>> want;
  for (int64_t e = 0; e < 4; ++e) want.push_back(AllBatches(reference, e));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(static_cast<uint64_t>(t));
      for (int i = 0; i < 300; ++i) {
        const int64_t e = static_cast<int64_t>(rng() % 4);
        const int64_t b = static_cast<int64_t>(rng() % static_cast<uint64_t>(order.num_batches()));
        if (Vec(order.Batch(e, b)) != want[e][b]) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(PartitionOrder, Errors) {
  const std::vector<int64_t> offsets{0, 10, 20};
  const Tensor ids = I64({1, 5, 12});
  auto expect_invalid = [](const PartitionOrder& o, std::initializer_list<std::string> parts) {
    EXPECT_EQ(o.num_batches(), 0);
    EXPECT_FALSE(o.Batch(0, 0).defined());
    EXPECT_TRUE(o.ResidentPartitions(0, 0).empty());
    ::foresight::testing::ExpectErrorContains(o.status(), "status()", parts);
  };
  expect_invalid(PartitionOrder(I64({1, 5, 20}), offsets, 2, 1),
                 {"PartitionOrder: train_ids[2] = 20 is outside the partitioned rows [0, 20)"});
  expect_invalid(PartitionOrder(I64({-1}), offsets, 2, 1), {"train_ids[0] = -1"});
  expect_invalid(PartitionOrder(ids, {0, 10, 5}, 2, 1),
                 {"PartitionOrder: offsets decrease at partition 1 (offsets[1] = 10 > offsets[2] = 5)"});
  expect_invalid(PartitionOrder(ids, {3, 20}, 2, 1), {"PartitionOrder: offsets[0] = 3 (expected 0)"});
  expect_invalid(PartitionOrder(ids, {0}, 2, 1), {"expected P+1 >= 2 row offsets", "got 1"});
  expect_invalid(PartitionOrder(ids, offsets, 0, 1), {"PartitionOrder: batch_size must be >= 1, got 0"});
  expect_invalid(PartitionOrder(ids, offsets, 2, 1, 0), {"PartitionOrder: group_size must be >= 1, got 0"});
  expect_invalid(PartitionOrder(Tensor(), offsets, 2, 1),
                 {"PartitionOrder: train_ids: expected a 1-D i32 or i64 host tensor, got an undefined tensor"});
  expect_invalid(PartitionOrder(Tensor::Zeros({3}, DType::kF32), offsets, 2, 1), {"PartitionOrder: train_ids"});
  // i32 ids and an empty training set are fine.
  Tensor i32 = Tensor::Empty({2}, DType::kI32);
  i32.data<int32_t>()[0] = 3;
  i32.data<int32_t>()[1] = 15;
  PartitionOrder ok(i32, offsets, 2, 1);
  ASSERT_OK(ok.status());
  EXPECT_EQ(ok.num_batches(), 1);  // ceil(2 ids / batch 2), across the two groups
  PartitionOrder empty(I64({}), offsets, 2, 1);
  ASSERT_OK(empty.status());
  EXPECT_EQ(empty.num_batches(), 0);
}

TEST(SamplingOptions, ParseOrderKindAndScope) {
  ASSERT_OK_AND_ASSIGN(OrderKind random, ParseOrderKind("random"));
  EXPECT_EQ(random, OrderKind::kRandom);
  ASSERT_OK_AND_ASSIGN(OrderKind partition, ParseOrderKind("partition"));
  EXPECT_EQ(partition, OrderKind::kPartition);
  EXPECT_ERROR_CONTAINS(ParseOrderKind("partitions"),
                        "unknown seed order 'partitions' (expected 'random' or 'partition')");
  ASSERT_OK_AND_ASSIGN(SamplingScope full, ParseSamplingScope("full"));
  EXPECT_EQ(full, SamplingScope::kFull);
  ASSERT_OK_AND_ASSIGN(SamplingScope resident, ParseSamplingScope("resident"));
  EXPECT_EQ(resident, SamplingScope::kResident);
  EXPECT_ERROR_CONTAINS(ParseSamplingScope("Full"), "unknown sampling scope 'Full' (expected 'full' or 'resident')");
  EXPECT_ERROR_CONTAINS(ParseSamplingScope(""), "unknown sampling scope ''");
}

std::vector<uint8_t> Bytes(const Tensor& t) {
  const uint8_t* p = t.data<uint8_t>();
  return std::vector<uint8_t>(p, p + t.numel());
}

std::vector<uint8_t> NaiveMask(const std::vector<int64_t>& offsets, const std::set<int>& parts) {
  std::vector<uint8_t> m(static_cast<size_t>(offsets.back()), 0);
  for (int p : parts) {
    for (int64_t r = offsets[p]; r < offsets[p + 1]; ++r) m[r] = 1;
  }
  return m;
}

TEST(ResidentMask, MatchesTheResidentRowsAcrossSets) {
  const PartitionedIds s;
  ResidentMask mask;
  EXPECT_FALSE(mask.mask().defined());
  EXPECT_EQ(mask.SamplingMask(), &mask.mask());  // undefined: Sample rejects it
  std::mt19937_64 rng(4);
  for (int round = 0; round < 50; ++round) {
    std::vector<int> parts;
    const int n = static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) parts.push_back(static_cast<int>(rng() % 10));  // repeats allowed
    ASSERT_OK(mask.Set(s.offsets, parts));
    const std::set<int> want_parts(parts.begin(), parts.end());
    ASSERT_EQ(mask.mask().dtype(), DType::kU8);
    ASSERT_EQ(Bytes(mask.mask()), NaiveMask(s.offsets, want_parts)) << "round " << round;
    EXPECT_EQ(mask.parts(), std::vector<int>(want_parts.begin(), want_parts.end()));
    int64_t rows = 0;
    for (int p : want_parts) rows += s.offsets[p + 1] - s.offsets[p];
    EXPECT_EQ(mask.num_resident_rows(), rows);
  }
  // The same set again leaves the tensor as it is.
  ASSERT_OK(mask.Set(s.offsets, {2, 1}));
  const uint8_t* before = mask.mask().data<uint8_t>();
  ASSERT_OK(mask.Set(s.offsets, {1, 2, 1}));
  EXPECT_EQ(mask.mask().data<uint8_t>(), before);
  EXPECT_EQ(Bytes(mask.mask()), NaiveMask(s.offsets, {1, 2}));
  EXPECT_EQ(mask.SamplingMask(), &mask.mask());
  // Other offsets of another size: a new mask.
  ASSERT_OK(mask.Set({0, 3, 6}, {1}));
  EXPECT_EQ(Bytes(mask.mask()), (std::vector<uint8_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(mask.SamplingMask(), &mask.mask());
  // Every row resident (the empty partition 2 changes nothing): no mask
  // needed.
  ASSERT_OK(mask.Set({0, 3, 6, 6}, {0, 1}));
  EXPECT_EQ(mask.num_resident_rows(), 6);
  EXPECT_EQ(mask.SamplingMask(), nullptr);
}

TEST(ResidentMask, Errors) {
  ResidentMask mask;
  EXPECT_ERROR_CONTAINS(mask.Set({0, 10, 20}, {0, 2}),
                        "ResidentMask: parts[1] = 2 is not a partition (expected [0, 2))");
  EXPECT_FALSE(mask.mask().defined());
  EXPECT_ERROR_CONTAINS(mask.Set({0, 10, 20}, {-1}), "parts[0] = -1");
  EXPECT_ERROR_CONTAINS(mask.Set({0, 10, 9}, {0}),
                        "ResidentMask: offsets decrease at partition 1 (offsets[1] = 10 > offsets[2] = 9)");
  EXPECT_ERROR_CONTAINS(mask.Set({1, 10}, {0}), "ResidentMask: offsets[0] = 1 (expected 0)");
  EXPECT_ERROR_CONTAINS(mask.Set({}, {0}), "ResidentMask: offsets: expected P+1 >= 2 row offsets, got 0");
  ASSERT_OK(mask.Set({0, 2, 4}, {0}));
  EXPECT_EQ(Bytes(mask.mask()), (std::vector<uint8_t>{1, 1, 0, 0}));
}

}  // namespace
}  // namespace foresight::sampler
