// The lru policy: unpinned resident rows in recency order (a row's recency
// is the release of the last batch that used it); every miss takes a free
// slot or evicts the least recently used row, and bypasses when every slot
// is pinned.
#include "key_map.h"
#include "planner_base.h"
#include "planners.h"
#include "slot_list.h"

namespace foresight::cache::internal {
namespace {

struct LruState {
  int32_t slot1;
  int32_t last_user1;
};
static_assert(sizeof(LruState) == kSmallStateBytes, "PlannerIndexBytes counts this state");

template <typename Map>
class LruPlanner final : public PlannerBase<LruPlanner<Map>, Map> {
  using Base = PlannerBase<LruPlanner<Map>, Map>;
  friend Base;

 public:
  LruPlanner(const CacheConfig& config, int32_t num_slots, Map keys)
      : Base(config, num_slots, std::move(keys)), lru_(num_slots) {}

 private:
  Status Prepare(int32_t) { return Status::OK(); }
  LruState& StateOf(int64_t key) { return this->keys_.FindOrInsert(key); }
  void OnUse(LruState&, BatchRecord&, int32_t, int32_t) {}
  void OnPinned(int32_t slot) { lru_.Remove(slot); }
  void OnUnpinned(int32_t slot, int64_t) { lru_.PushBack(slot); }
  bool Idle(const LruState&) const { return true; }

  void PlaceMisses(int32_t, BatchRecord& rec, BatchPlan& plan) {
    for (const int32_t i : this->misses_) {
      int32_t slot;
      if (this->slots_.num_free() > 0) {
        slot = this->slots_.TakeFree();
      } else if (!lru_.empty()) {
        slot = lru_.front();
        lru_.Remove(slot);
        this->Evict(slot, plan);
      } else {
        continue;  // every slot is pinned: bypass
      }
      this->Admit(rec, plan, i, slot);
    }
  }

  SlotList lru_;  // least recently used first
};

}  // namespace

std::unique_ptr<CachePlanner> MakeLruPlanner(const CacheConfig& config, int32_t num_slots) {
  if (config.key_space > 0) {
    return std::make_unique<LruPlanner<DenseKeyMap<LruState>>>(config, num_slots,
                                                               DenseKeyMap<LruState>(config.key_space));
  }
  return std::make_unique<LruPlanner<SparseKeyMap<LruState>>>(config, num_slots, SparseKeyMap<LruState>());
}

}  // namespace foresight::cache::internal
