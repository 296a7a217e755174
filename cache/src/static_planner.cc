// The static policy: the first num_slots keys given to SetStaticKeys are
// fetched by the first plan and stay; nothing is ever evicted or admitted,
// every other row is a bypass read. Batch keys that the fill brings in count
// as misses of that first plan (they were not resident before it).
#include "key_map.h"
#include "planner_base.h"
#include "planners.h"

namespace foresight::cache::internal {
namespace {

struct StaticState {
  int32_t slot1;
  int32_t last_user1;
};
static_assert(sizeof(StaticState) == kSmallStateBytes, "PlannerIndexBytes counts this state");

template <typename Map>
class StaticPlanner final : public PlannerBase<StaticPlanner<Map>, Map> {
  using Base = PlannerBase<StaticPlanner<Map>, Map>;
  friend Base;

 public:
  using Base::Base;

  Status SetStaticKeys(std::vector<int64_t> keys) override { return this->AcceptStaticKeys(std::move(keys)); }

 private:
  Status Prepare(int32_t) { return this->NeedStaticKeys("the static policy"); }
  StaticState& StateOf(int64_t key) { return this->keys_.FindOrInsert(key); }
  void OnUse(StaticState&, BatchRecord&, int32_t, int32_t) {}
  void OnPinned(int32_t) {}
  void OnUnpinned(int32_t, int64_t) {}
  bool Idle(const StaticState&) const { return true; }

  // Every miss after the fill bypasses.
  void PlaceMisses(int32_t, BatchRecord& rec, BatchPlan& plan) {
    if (!this->static_filled()) this->FillStatic(this->num_slots(), /*pins=*/0, rec, plan);
  }
};

}  // namespace

std::unique_ptr<CachePlanner> MakeStaticPlanner(const CacheConfig& config, int32_t num_slots) {
  if (config.key_space > 0) {
    return std::make_unique<StaticPlanner<DenseKeyMap<StaticState>>>(config, num_slots,
                                                                     DenseKeyMap<StaticState>(config.key_space));
  }
  return std::make_unique<StaticPlanner<SparseKeyMap<StaticState>>>(config, num_slots,
                                                                    SparseKeyMap<StaticState>());
}

}  // namespace foresight::cache::internal
