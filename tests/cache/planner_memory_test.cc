// The planner's memory is what the memory plan charges for it: per slot,
// SlotRecordBytes beside the row; per key, PlannerIndexBytes. Measured as
// the heap a planner takes (allocated, touched or not: the flat index is
// calloc'd and grows into its pages as keys are met, up to all of them).
// With 32-byte rows the records cost as much as the rows, so a plan that
// forgot them ran 0.5 GB over a 4 GiB budget at 100M nodes.
// ASan and TSan allocate through their own heaps, which mallinfo2 does not
// see: .ci/sanitize leaves these tests out of its runs.
#include <malloc.h>

#include "foresight/cache/cache_planner.h"
#include "testing/testing.h"

namespace foresight::cache {
namespace {

int64_t HeapBytes() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
}

// Heap bytes of a planner made for `config`.
int64_t PlannerHeapBytes(const CacheConfig& config) {
  const int64_t before = HeapBytes();
  auto planner = CachePlanner::Create(config);
  EXPECT_TRUE(planner.ok()) << planner.status().ToString();
  return HeapBytes() - before;
}

TEST(PlannerMemory, EachSlotCostsItsRecords) {
  for (Policy policy : {Policy::kLookahead, Policy::kLru, Policy::kStatic}) {
    CacheConfig c;
    c.policy = policy;
    c.row_bytes = 32;
    c.key_space = 1000;  // a negligible index
    constexpr int64_t kSlots = 1 << 20;
    c.capacity_bytes = kSlots * c.row_bytes;
    const double per_slot = static_cast<double>(PlannerHeapBytes(c)) / kSlots;
    EXPECT_NEAR(per_slot, static_cast<double>(SlotRecordBytes(c)), 0.5) << PolicyName(policy);
  }
}

TEST(PlannerMemory, EachKeyCostsItsIndexEntry) {
  for (Policy policy : {Policy::kLookahead, Policy::kLru, Policy::kStatic}) {
    CacheConfig c;
    c.policy = policy;
    c.row_bytes = 32;
    c.key_space = 1 << 22;
    c.capacity_bytes = 64 * c.row_bytes;  // a negligible slot table
    const double measured = static_cast<double>(PlannerHeapBytes(c));
    const double planned = static_cast<double>(PlannerIndexBytes(c));
    EXPECT_NEAR(measured / static_cast<double>(c.key_space), planned / static_cast<double>(c.key_space), 0.5)
        << PolicyName(policy);
  }
}

}  // namespace
}  // namespace foresight::cache
