// LocalIdMap (sampler/src): first-appearance local ids against a plain
// std::unordered_map reference, across batches (tags: nothing leaks from an
// earlier batch, also when the tag base wraps and the table is cleared),
// through the table's growth in the middle of a batch, with 32- and 64-bit
// node keys, and its errors.
#include "local_id_map.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <unordered_map>
#include <vector>

#include "foresight/sampler/neighbor_sampler.h"
#include "testing/testing.h"

namespace foresight::sampler::internal {
namespace {

Tensor I64(const std::vector<int64_t>& v) { return testing::TensorOf(v); }

// The reference: ids handed out in first-appearance order.
struct Reference {
  std::unordered_map<int64_t, int64_t> local;
  std::vector<int64_t> nodes;
  int64_t Id(int64_t v) {
    auto [it, fresh] = local.try_emplace(v, static_cast<int64_t>(nodes.size()));
    if (fresh) nodes.push_back(v);
    return it->second;
  }
};

// Runs batches of the given sizes through `map` over a graph of `num_nodes`
// nodes, ids drawn from [offset, offset + 2 * batch + 1000), against the
// reference.
void CheckBatches(LocalIdMap* map, int64_t num_nodes, int64_t offset, const std::vector<int64_t>& sizes,
                  uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int64_t batch_ids : sizes) {
    const int64_t range = 2 * batch_ids + 1000;
    std::vector<int64_t> seeds;
    Reference ref;
    while (static_cast<int64_t>(seeds.size()) < std::min<int64_t>(batch_ids, 500)) {
      const int64_t v = offset + static_cast<int64_t>(rng() % static_cast<uint64_t>(range));
      if (ref.local.count(v) == 0) {
        ref.Id(v);
        seeds.push_back(v);
      }
    }
    ASSERT_OK(map->Begin(num_nodes, I64(seeds), "seeds"));
    // Several Relabel calls, as the sampler's sink makes them, drawing from
    // a range small enough that ids repeat.
    for (int call = 0; call < 4; ++call) {
      std::vector<int64_t> ids(static_cast<size_t>(batch_ids / 4 + 1));
      for (int64_t& v : ids) v = offset + static_cast<int64_t>(rng() % static_cast<uint64_t>(range));
      std::vector<int64_t> want;
      for (int64_t v : ids) want.push_back(ref.Id(v));
      ASSERT_OK(map->Relabel(ids.data(), ids.data(), static_cast<int64_t>(ids.size())));
      ASSERT_EQ(ids, want) << "batch of " << batch_ids << ", call " << call;
    }
    EXPECT_EQ(testing::VectorOf<int64_t>(map->Nodes()), ref.nodes);
    map->Reset();
    EXPECT_EQ(map->size(), 0);
  }
}

// Batch sizes from a few ids to far past the smallest table (4096 entries,
// so the table grows inside the batch), and back down: a small batch after a
// large one must see none of its entries.
const std::vector<int64_t> kSizes = {10, 50000, 200, 120000, 30};

TEST(LocalIdMapTest, MatchesReferenceAcrossBatchesAndGrowth) {
  LocalIdMap map;
  CheckBatches(&map, 1000000, 0, kSizes, 3);
}

// Graphs of 2^31 nodes and more keep 64-bit nodes in the table; ids past
// 2^32 must not collide with their low 32 bits. The same map then goes back
// to a small graph.
TEST(LocalIdMapTest, SixtyFourBitNodes) {
  LocalIdMap map;
  const int64_t huge = int64_t{3} << 32;
  CheckBatches(&map, huge, (int64_t{1} << 32) - 5000, kSizes, 5);
  std::vector<int64_t> ids = {7, int64_t{1} << 32, 7 + (int64_t{1} << 32), 7};
  ASSERT_OK(map.Begin(huge, I64({int64_t{2} << 32}), "seeds"));
  ASSERT_OK(map.Relabel(ids.data(), ids.data(), 4));
  EXPECT_EQ(ids, (std::vector<int64_t>{1, 2, 3, 1}));
  map.Reset();
  CheckBatches(&map, 1000000, 0, {300, 70000}, 6);
}

// A low tag bound forces the clear-and-restart path every few batches: no
// entry of an earlier batch may come back to life.
TEST(LocalIdMapTest, TagBaseWrapClearsTheTable) {
  LocalIdMap map(/*max_base=*/5000);
  std::vector<int64_t> sizes;
  for (int i = 0; i < 40; ++i) sizes.push_back(i % 2 == 0 ? 900 : 40);
  CheckBatches(&map, 3000, 0, sizes, 7);
}

// Nodes() is a view that later Relabel calls leave as it was, even when
// they move the map to a bigger buffer; TakeNodes hands the buffer over, and
// the next batch does not write into it.
TEST(LocalIdMapTest, NodeViewsStayValid) {
  LocalIdMap map;
  ASSERT_OK(map.Begin(1000000, I64({5, 9}), "seeds"));
  const Tensor frontier = map.Nodes();
  std::vector<int64_t> ids(5000);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = 100 + static_cast<int64_t>(i);  // all new: the buffer grows
  ASSERT_OK(map.Relabel(ids.data(), ids.data(), static_cast<int64_t>(ids.size())));
  EXPECT_EQ(testing::VectorOf<int64_t>(frontier), (std::vector<int64_t>{5, 9}));
  EXPECT_EQ(map.size(), 5002);
  const Tensor taken = map.TakeNodes();
  ASSERT_EQ(taken.numel(), 5002);
  map.Reset();
  ASSERT_OK(map.Begin(1000000, I64({7, 8, 6}), "seeds"));
  std::vector<int64_t> more = {1, 2, 3};
  ASSERT_OK(map.Relabel(more.data(), more.data(), 3));
  EXPECT_EQ(testing::VectorOf<int64_t>(map.Nodes()), (std::vector<int64_t>{7, 8, 6, 1, 2, 3}));
  const std::vector<int64_t> first = testing::VectorOf<int64_t>(taken);
  EXPECT_EQ(first[0], 5);
  EXPECT_EQ(first[1], 9);
  EXPECT_EQ(first[2], 100);
  EXPECT_EQ(first[5001], 5099);
}

// The table geometry the memory plan and the benchmarks read.
TEST(LocalIdMapTest, TableGeometry) {
  EXPECT_EQ(IdTableEntries(0), 4096);
  EXPECT_EQ(IdTableEntries(1024), 4096);
  EXPECT_EQ(IdTableEntries(1025), 8192);
  EXPECT_EQ(IdTableEntries(30000), 131072);
  EXPECT_EQ(IdTableEntryBytes(1000000), 8);
  EXPECT_EQ(IdTableEntryBytes(std::numeric_limits<int32_t>::max()), 8);
  EXPECT_EQ(IdTableEntryBytes(int64_t{1} << 31), 16);
}

TEST(LocalIdMapTest, Errors) {
  LocalIdMap map;
  EXPECT_ERROR_CONTAINS(map.Begin(10, I64({1, 12}), "seeds"), "seeds[1] = 12", "out of range [0, 10)");
  EXPECT_EQ(map.size(), 0);
  EXPECT_ERROR_CONTAINS(map.Begin(10, I64({4, 2, 4}), "seeds"), "seeds[2] = 4", "repeats seeds[0]");
  EXPECT_EQ(map.size(), 0);
  ASSERT_OK(map.Begin(10, I64({4, 2}), "seeds"));
  std::vector<int64_t> ids = {2, 7, -1};
  EXPECT_ERROR_CONTAINS(map.Relabel(ids.data(), ids.data(), 3), "graph.indices holds node -1", "outside [0, 10)");
  map.Reset();
  // After an error and a reset the map starts clean.
  ASSERT_OK(map.Begin(10, I64({7}), "seeds"));
  std::vector<int64_t> more = {2, 7, 2};
  ASSERT_OK(map.Relabel(more.data(), more.data(), 3));
  EXPECT_EQ(more, (std::vector<int64_t>{1, 0, 1}));
}

}  // namespace
}  // namespace foresight::sampler::internal
