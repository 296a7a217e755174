// OwnedPartitionOrder and AssignPartitionOwners: owners hold disjoint,
// balanced, deterministic sets of partitions; each owner's part of every
// global batch lies in its own partitions and its own groups; the global
// batch is the owners' parts in owner order, every training id once an
// epoch, ceil(n / B) batches as with one owner; a subset PartitionOrder
// visits only its partitions; errors for more owners than partitions.
#include "foresight/sampler/owned_partition_order.h"

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "testing/testing.h"

namespace foresight::sampler {
namespace {

std::vector<int64_t> Vec(const Tensor& t) { return testing::VectorOf<int64_t>(t); }

int PartitionOf(const std::vector<int64_t>& offsets, int64_t id) {
  return static_cast<int>(std::upper_bound(offsets.begin(), offsets.end(), id) - offsets.begin()) - 1;
}

// 7 partitions of uneven sizes (one empty): not divisible by 2 or 3 owners.
struct Layout {
  std::vector<int64_t> offsets{0, 40, 45, 45, 130, 160, 260, 300};
  std::vector<int64_t> ids;
  Layout() {
    std::mt19937_64 rng(5);
    for (int64_t v = 0; v < offsets.back(); ++v) {
      if (rng() % 10 < 6) ids.push_back(v);
    }
    std::shuffle(ids.begin(), ids.end(), rng);
  }
};

TEST(AssignPartitionOwners, BalancesSeedsDeterministically) {
  // Seeds 50, 40, 30, 20, 10: greedy by most seeds to the lightest owner.
  auto owned = AssignPartitionOwners({10, 50, 30, 40, 20}, {1, 1, 1, 1, 1}, 2);
  ASSERT_OK(owned.status());
  // 50 -> r0; 40 -> r1; 30 -> r1 (40 < 50); 20 -> r0 (50 < 70); 10 -> r0
  // (70 seeds, 2 rows and 2 partitions each: the smaller owner).
  EXPECT_EQ((*owned)[0], (std::vector<int>{0, 1, 4}));
  EXPECT_EQ((*owned)[1], (std::vector<int>{2, 3}));
  auto again = AssignPartitionOwners({10, 50, 30, 40, 20}, {1, 1, 1, 1, 1}, 2);
  ASSERT_OK(again.status());
  EXPECT_EQ(*again, *owned);
  // Equal seeds: rows decide, so both owners read about as much.
  auto by_rows = AssignPartitionOwners({5, 5, 5, 5}, {100, 10, 90, 20}, 2);
  ASSERT_OK(by_rows.status());
  EXPECT_EQ((*by_rows)[0], (std::vector<int>{0, 1}));
  EXPECT_EQ((*by_rows)[1], (std::vector<int>{2, 3}));
}

TEST(AssignPartitionOwners, RefusesMoreOwnersThanPartitions) {
  EXPECT_ERROR_CONTAINS(AssignPartitionOwners({5, 5}, {9, 9}, 3).status(), "3 ranks need at least as many");
  EXPECT_ERROR_CONTAINS(AssignPartitionOwners({5, 0, 0}, {9, 9, 9}, 2).status(), "only 1 of the 3 partitions");
}

TEST(OwnedPartitionOrder, OwnersTakeTheirOwnPartitionsAndTogetherEveryIdOnce) {
  const Layout l;
  const int64_t n = static_cast<int64_t>(l.ids.size());
  for (int owners : {1, 2, 3}) {
    for (int group : {1, 2}) {
      OwnedPartitionOrder order(testing::TensorOf(l.ids), l.offsets, 16, 9, group, owners);
      ASSERT_OK(order.status());
      ASSERT_EQ(order.owners(), owners);
      EXPECT_EQ(order.num_batches(), (n + 15) / 16) << "the one-owner batch count";
      // Disjoint partitions covering all 7.
      std::vector<int> all;
      for (int r = 0; r < owners; ++r) {
        const std::vector<int>& mine = order.OwnerPartitions(r);
        all.insert(all.end(), mine.begin(), mine.end());
      }
      std::sort(all.begin(), all.end());
      EXPECT_EQ(all, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
      for (int64_t epoch : {0, 1}) {
        std::vector<int64_t> seen;
        for (int64_t b = 0; b < order.num_batches(); ++b) {
          const std::vector<int64_t> global = Vec(order.Batch(epoch, b));
          EXPECT_LE(static_cast<int64_t>(global.size()), 16 + owners - 1);
          std::vector<int64_t> joined;
          for (int r = 0; r < owners; ++r) {
            const std::vector<int64_t> part = Vec(order.Part(r).Batch(epoch, b));
            const std::vector<int>& mine = order.OwnerPartitions(r);
            // Its seeds in its partitions, inside its own batch's groups.
            const std::vector<int> resident = order.OwnerOrder(r).ResidentPartitions(epoch, b);
            for (int64_t id : part) {
              const int p = PartitionOf(l.offsets, id);
              EXPECT_TRUE(std::binary_search(mine.begin(), mine.end(), p)) << "owner " << r << " got id " << id;
              EXPECT_TRUE(std::binary_search(resident.begin(), resident.end(), p)) << "owner " << r;
            }
            joined.insert(joined.end(), part.begin(), part.end());
          }
          EXPECT_EQ(joined, global) << "the global batch is the owners' parts in owner order";
          seen.insert(seen.end(), global.begin(), global.end());
        }
        std::sort(seen.begin(), seen.end());
        std::vector<int64_t> want = l.ids;
        std::sort(want.begin(), want.end());
        EXPECT_EQ(seen, want) << owners << " owners, epoch " << epoch;
      }
      EXPECT_FALSE(order.Batch(0, order.num_batches()).defined());
      EXPECT_FALSE(order.Part(0).Batch(0, -1).defined());
    }
  }
}

TEST(OwnedPartitionOrder, OneOwnerIsThePartitionOrder) {
  const Layout l;
  OwnedPartitionOrder owned(testing::TensorOf(l.ids), l.offsets, 16, 9, 2, 1);
  PartitionOrder plain(testing::TensorOf(l.ids), l.offsets, 16, 9, 2);
  ASSERT_OK(owned.status());
  ASSERT_EQ(owned.num_batches(), plain.num_batches());
  for (int64_t b = 0; b < plain.num_batches(); ++b) EXPECT_EQ(Vec(owned.Batch(3, b)), Vec(plain.Batch(3, b)));
}

TEST(OwnedPartitionOrder, SharesFollowTheOwnersSeeds) {
  const Layout l;
  OwnedPartitionOrder order(testing::TensorOf(l.ids), l.offsets, 16, 9, 1, 3);
  ASSERT_OK(order.status());
  int64_t total = 0;
  for (int r = 0; r < 3; ++r) {
    const PartitionOrder& mine = order.OwnerOrder(r);
    EXPECT_EQ(mine.batch_size(), (mine.num_ids() + order.num_batches() - 1) / order.num_batches());
    EXPECT_LE(mine.num_batches(), order.num_batches());
    total += mine.num_ids();
  }
  EXPECT_EQ(total, static_cast<int64_t>(l.ids.size()));
  EXPECT_NE(order.Describe().find("rank 2: partitions "), std::string::npos) << order.Describe();
}

TEST(OwnedPartitionOrder, ErrorsSayWhy) {
  const Layout l;
  OwnedPartitionOrder too_many(testing::TensorOf(l.ids), l.offsets, 16, 9, 1, 8);
  EXPECT_ERROR_CONTAINS(too_many.status(), "8 ranks need at least as many partitions, but the dataset has 7");
  EXPECT_EQ(too_many.num_batches(), 0);
  OwnedPartitionOrder bad(testing::TensorOf(l.ids), l.offsets, 0, 9, 1, 2);
  EXPECT_ERROR_CONTAINS(bad.status(), "batch_size");
  PartitionOrder twice(testing::TensorOf(l.ids), l.offsets, 16, 9, 1, {1, 1});
  EXPECT_ERROR_CONTAINS(twice.status(), "named twice");
  PartitionOrder outside(testing::TensorOf(l.ids), l.offsets, 16, 9, 1, {7});
  EXPECT_ERROR_CONTAINS(outside.status(), "outside [0, 7)");
}

TEST(PartitionOrder, ASubsetVisitsOnlyItsPartitions) {
  const Layout l;
  PartitionOrder order(testing::TensorOf(l.ids), l.offsets, 10, 4, 1, {6, 0, 4});
  ASSERT_OK(order.status());
  EXPECT_EQ(order.visited_partitions(), (std::vector<int>{0, 4, 6}));
  int64_t want = 0;
  for (int64_t id : l.ids) want += PartitionOf(l.offsets, id) == 0 || PartitionOf(l.offsets, id) == 4 ||
                                   PartitionOf(l.offsets, id) == 6;
  EXPECT_EQ(order.num_ids(), want);
  EXPECT_EQ(order.num_groups(), 3);
  std::set<int64_t> seen;
  for (int64_t b = 0; b < order.num_batches(); ++b) {
    for (int64_t id : Vec(order.Batch(0, b))) {
      const int p = PartitionOf(l.offsets, id);
      EXPECT_TRUE(p == 0 || p == 4 || p == 6) << id;
      seen.insert(id);
    }
  }
  EXPECT_EQ(static_cast<int64_t>(seen.size()), want);
}

}  // namespace
}  // namespace foresight::sampler
