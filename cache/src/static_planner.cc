// The static policy: the first num_slots keys given to SetStaticKeys are
// fetched by the first plan and stay; nothing is ever evicted or admitted,
// every other row is a bypass read. Batch keys that the fill brings in count
// as misses of that first plan (they were not resident before it).
#include <algorithm>

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

  Status SetStaticKeys(std::vector<int64_t> keys) override {
    if (filled_) return FailedPrecondition("SetStaticKeys: the static cache was already filled by the first plan");
    FS_RETURN_IF_ERROR(check_.Check(keys, this->config().key_space, "SetStaticKeys"));
    static_keys_ = std::move(keys);
    have_keys_ = true;
    return Status::OK();
  }

 private:
  Status Prepare(int32_t) {
    if (!filled_ && !have_keys_) {
      return FailedPrecondition("PlanNext: the static policy needs SetStaticKeys before the first plan");
    }
    return Status::OK();
  }
  StaticState& StateOf(int64_t key) { return this->keys_.FindOrInsert(key); }
  void OnUse(StaticState&, BatchRecord&, int32_t, int32_t) {}
  void OnPinned(int32_t) {}
  void OnUnpinned(int32_t, int64_t) {}
  bool Idle(const StaticState&) const { return true; }

  void PlaceMisses(int32_t, BatchRecord& rec, BatchPlan& plan) {
    if (filled_) return;  // every miss bypasses
    filled_ = true;
    const int32_t fill = static_cast<int32_t>(std::min<int64_t>(this->num_slots(), static_keys_.size()));
    for (int32_t j = 0; j < fill; ++j) {
      const int64_t key = static_keys_[j];
      this->keys_.FindOrInsert(key).slot1 = j + 1;
      this->slots_.Assign(j, key, /*pins=*/0);
      plan.fetches.push_back(SlotKey{key, j});
    }
    this->counters_.fetches += fill;
    std::vector<int64_t>().swap(static_keys_);
    for (const int32_t i : this->misses_) {
      const int32_t slot = this->keys_.Find(rec.keys[i])->slot1 - 1;
      if (slot < 0) continue;
      this->slots_.Pin(slot);
      plan.location[i] = slot;
      rec.slots[i] = slot;
    }
  }

  KeyListCheck check_;
  std::vector<int64_t> static_keys_;
  bool have_keys_ = false;
  bool filled_ = false;
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
