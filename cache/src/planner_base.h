// PlannerBase: what every policy shares. It owns the batch window, the
// slot table and the per-key states, runs Submit / Release / TakeDirty, and
// runs PlanNext's common pass (hits are pinned first, so that no miss of a
// batch can evict a row the same batch reads; the read-after-write wait is
// computed from each key's last user). The policy (CRTP `Derived`) decides
// what happens to the misses. Derived provides:
//   Status Prepare(int32_t t)                 before the pass (index window)
//   State& StateOf(int64_t key)               the key's state, created if new
//   void OnUse(State&, BatchRecord&, t, i)    the key is used by batch t at i
//   void OnPinned(int32_t slot)               an evictable slot got pinned
//   void OnUnpinned(int32_t slot, int64_t key)  a slot became evictable
//   void PlaceMisses(t, BatchRecord&, BatchPlan&)  admit (Admit/Evict) or not
//   bool Idle(const State&)                   the policy keeps nothing for it
// State has int32_t slot1 (slot + 1, 0 = not resident) and last_user1 (the
// last batch that used the key + 1, tracked only when writable).
// The static fill (the static policy, and the lookahead's static tier) is
// here too: AcceptStaticKeys, NeedStaticKeys, FillStatic.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "batch_window.h"
#include "foresight/cache/cache_planner.h"
#include "key_list_check.h"
#include "slot_table.h"

namespace foresight::cache::internal {

template <typename Derived, typename Map>
class PlannerBase : public CachePlanner {
 public:
  using State = typename Map::StateType;

  PlannerBase(const CacheConfig& config, int32_t num_slots, Map keys)
      : CachePlanner(config, num_slots),
        keys_(std::move(keys)),
        slots_(num_slots),
        window_(config.key_space, config.lookahead) {}

  Status SetStaticKeys(std::vector<int64_t> keys) override {
    return FailedPrecondition(std::string("SetStaticKeys: the cache policy is ") + PolicyName(config().policy) +
                              "; only the static policy takes static keys");
  }

  Status Submit(std::vector<int64_t> keys) override { return window_.Submit(std::move(keys)); }
  void Close() override { window_.Close(); }
  bool CanPlan() const override { return window_.CanPlan(); }
  int64_t in_flight() const override { return window_.in_flight(); }
  CacheCounters counters() const override { return counters_; }

  StatusOr<BatchPlan> PlanNext() override {
    if (!window_.CanPlan()) {
      return FailedPrecondition("PlanNext: " + window_.WhyNotPlannable() + " (check CanPlan() first)");
    }
    const int32_t t = window_.next_to_plan();
    FS_RETURN_IF_ERROR(derived().Prepare(t));
    BatchRecord& rec = window_.BeginPlan();
    const int32_t n = static_cast<int32_t>(rec.keys.size());
    BatchPlan plan;
    plan.seq = t;
    plan.keys = rec.keys;
    plan.location.assign(n, kBypass);
    rec.slots.assign(n, -1);
    misses_.clear();
    evicted_.clear();

    const bool writable = config().writable;
    const int64_t* keys = rec.keys.data();
    int32_t wait = -1;
    constexpr int32_t kAhead = 16;  // prefetch distance: states are random accesses
    for (int32_t i = 0; i < n; ++i) {
      if (i + kAhead < n) keys_.Prefetch(keys[i + kAhead]);
      State& s = derived().StateOf(keys[i]);
      if (writable) {
        const int32_t last = s.last_user1 - 1;
        if (last >= 0 && last > wait && window_.InFlight(last)) wait = last;
        s.last_user1 = t + 1;
      }
      derived().OnUse(s, rec, t, i);
      const int32_t slot = s.slot1 - 1;
      if (slot >= 0) {
        plan.location[i] = slot;
        rec.slots[i] = slot;
        if (slots_.Pin(slot)) derived().OnPinned(slot);
      } else {
        misses_.push_back(i);
      }
    }
    derived().PlaceMisses(t, rec, plan);

    plan.bypass.reserve(misses_.size());
    for (const int32_t i : misses_) {
      if (rec.slots[i] < 0) plan.bypass.push_back(i);
    }
    plan.wait_for_seq = wait;
    plan.misses = static_cast<int64_t>(misses_.size());
    plan.hits = n - plan.misses;
    counters_.hits += plan.hits;
    counters_.misses += plan.misses;
    counters_.bypassed += static_cast<int64_t>(plan.bypass.size());
    if constexpr (Map::kSparse) {
      for (const int64_t i : plan.bypass) MaybeErase(keys[i]);
      for (const int64_t k : evicted_) MaybeErase(k);
    }
    return plan;
  }

  Status Release(int64_t seq, bool wrote) override {
    if (wrote && !config().writable) {
      return InvalidArgument("Release: batch " + std::to_string(seq) +
                             " wrote its rows but the cache is read-only (CacheConfig::writable is false)");
    }
    FS_ASSIGN_OR_RETURN(BatchRecord * rec, window_.InFlightRecord(seq));
    const int32_t n = static_cast<int32_t>(rec->slots.size());
    erase_check_.clear();
    constexpr int32_t kAhead = 16;
    for (int32_t i = 0; i < n; ++i) {
      if (i + kAhead < n && rec->slots[i + kAhead] >= 0) keys_.Prefetch(rec->keys[i + kAhead]);
      const int32_t slot = rec->slots[i];
      if (slot < 0) {
        if (Map::kSparse && config().writable) erase_check_.push_back(rec->keys[i]);
        continue;
      }
      if (wrote) slots_.MarkDirty(slot);
      if (slots_.Unpin(slot)) derived().OnUnpinned(slot, rec->keys[i]);
    }
    window_.FinishRelease(static_cast<int32_t>(seq));  // may drop *rec
    for (const int64_t k : erase_check_) MaybeErase(k);
    return Status::OK();
  }

  StatusOr<std::vector<SlotKey>> TakeDirty(bool unwritten_in_flight = false) override {
    if (window_.in_flight() > 0 && !unwritten_in_flight) {
      return FailedPrecondition("TakeDirty: " + std::to_string(window_.in_flight()) +
                                " batches are in flight; release them first");
    }
    return slots_.TakeDirty();
  }

 protected:
  Derived& derived() { return static_cast<Derived&>(*this); }

  // SetStaticKeys of a policy that takes them: checked like a batch's keys,
  // kept until the first plan fills them in.
  Status AcceptStaticKeys(std::vector<int64_t> keys) {
    if (static_filled_) {
      return FailedPrecondition("SetStaticKeys: the static cache was already filled by the first plan");
    }
    FS_RETURN_IF_ERROR(static_check_.Check(keys, config().key_space, "SetStaticKeys"));
    static_keys_ = std::move(keys);
    have_static_keys_ = true;
    return Status::OK();
  }
  // FailedPrecondition naming `who` until SetStaticKeys was called.
  Status NeedStaticKeys(const std::string& who) const {
    if (static_filled_ || have_static_keys_) return Status::OK();
    return FailedPrecondition("PlanNext: " + who + " needs SetStaticKeys before the first plan");
  }
  bool static_filled() const { return static_filled_; }

  // The first plan's static fill: the first `count` static keys (fewer when
  // fewer were given) take the lowest free slots with `pins` pins that are
  // never released (1: never evictable), fetched by `plan`. The batch's
  // misses among them are placed in their slots; they stay misses (the
  // fill reads them). The key list is dropped.
  void FillStatic(int64_t count, int32_t pins, BatchRecord& rec, BatchPlan& plan) {
    static_filled_ = true;
    const int64_t fill = std::min<int64_t>(count, static_cast<int64_t>(static_keys_.size()));
    for (int64_t j = 0; j < fill; ++j) {
      const int64_t key = static_keys_[j];
      const int32_t slot = slots_.TakeFree();
      keys_.FindOrInsert(key).slot1 = slot + 1;
      slots_.Assign(slot, key, pins);
      plan.fetches.push_back(SlotKey{key, slot});
    }
    counters_.fetches += fill;
    std::vector<int64_t>().swap(static_keys_);
    for (const int32_t i : misses_) {
      const int32_t slot = keys_.Find(rec.keys[i])->slot1 - 1;
      if (slot < 0) continue;
      slots_.Pin(slot);
      plan.location[i] = slot;
      rec.slots[i] = slot;
    }
  }

  // Miss at position i of `rec` goes into `slot` (free or just evicted).
  void Admit(BatchRecord& rec, BatchPlan& plan, int32_t i, int32_t slot) {
    const int64_t key = rec.keys[i];
    keys_.Find(key)->slot1 = slot + 1;
    slots_.Assign(slot, key, /*pins=*/1);
    plan.fetches.push_back(SlotKey{key, slot});
    plan.location[i] = slot;
    rec.slots[i] = slot;
    ++counters_.fetches;
  }

  // Empties an unpinned resident slot; a dirty row is written back first.
  void Evict(int32_t slot, BatchPlan& plan) {
    const int64_t old = slots_.key(slot);
    if (slots_.dirty(slot)) {
      plan.writebacks.push_back(SlotKey{old, slot});
      ++counters_.writebacks;
    }
    keys_.Find(old)->slot1 = 0;
    ++counters_.evictions;
    if constexpr (Map::kSparse) evicted_.push_back(old);
  }

  // Sparse keys only: drops a state that holds nothing any more.
  void MaybeErase(int64_t key) {
    State* s = keys_.Find(key);
    if (s == nullptr || s->slot1 != 0 || !derived().Idle(*s)) return;
    if (s->last_user1 != 0 && window_.InFlight(s->last_user1 - 1)) return;
    keys_.Erase(key);
  }

  Map keys_;
  SlotTable slots_;
  BatchWindow window_;
  CacheCounters counters_;
  std::vector<int32_t> misses_;  // positions of this plan's misses, in order
  std::vector<int64_t> evicted_;
  std::vector<int64_t> erase_check_;

 private:
  KeyListCheck static_check_;
  std::vector<int64_t> static_keys_;
  bool have_static_keys_ = false;
  bool static_filled_ = false;
};

}  // namespace foresight::cache::internal
