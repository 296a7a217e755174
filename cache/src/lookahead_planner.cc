// The lookahead policy: Belady's MIN inside the window, with bypass.
//
// Next-use index: each batch entering the window (up to t + W while batch t
// is planned) links every key's previous occurrence to this one, so each key
// carries a queue of its future occurrences: its head (next use: batch and
// position there) and tail. Planning batch t pops the head of each of its
// keys.
//
// Eviction order: an unpinned resident row next used by batch b sits in b's
// candidate set (its position in b); one with no use inside the window sits
// in the `never_` lists (oldest first). The victim is the largest (next use,
// position) — any `never_` row first, then the latest batch's largest
// position. Among the `never_` rows the clean ones go first: the window
// says nothing about when either kind is used again, and a clean row
// leaves without a write-back (on a disk store a dirty one costs a block
// write, and a block read unless the block is written whole). Rows move between these sets only when a batch enters the window
// (never -> b), when a slot is unpinned (-> its next use), or when a batch is
// planned (its whole candidate set gets pinned) — no rescans.
//
// Admission: batch t's misses are taken nearest next use first (ties by the
// position in that next batch; rows with no use in the window last). Each
// takes a free slot, or evicts the victim when the victim's next use is
// strictly later than its own; otherwise it and every later miss bypass.
// A miss with no use in the window replaces the oldest clean row with none,
// else the oldest dirty one (beyond the window the policy is LRU, clean rows
// first). With a window covering the trace
// this is MIN with bypass at batch granularity (a batch's own rows are
// pinned while it is planned).
//
// Static tier (hot_slots > 0): the first plan fills the lowest hot_slots
// slots with the hottest keys, each holding a pin that is never released,
// so they never enter the eviction order (candidate sets and `never_` only
// take unpinned rows) and every later use is a hit. The lookahead rules
// above then run on the other slots and rows exactly as they would with no
// tier and those rows absent.
#include <algorithm>

#include "key_map.h"
#include "planner_base.h"
#include "planners.h"
#include "slot_list.h"

namespace foresight::cache::internal {
namespace {

struct LookaheadState {
  int32_t slot1;
  int32_t last_user1;
  int32_t head1;  // next use (batch + 1), 0 = none inside the window
  int32_t head_pos;
  int32_t tail_seq;  // last indexed occurrence (valid while head1 != 0)
  int32_t tail_pos;
};

template <typename Map>
class LookaheadPlanner final : public PlannerBase<LookaheadPlanner<Map>, Map> {
  using Base = PlannerBase<LookaheadPlanner<Map>, Map>;
  friend Base;

 public:
  LookaheadPlanner(const CacheConfig& config, int32_t num_slots, Map keys)
      : Base(config, num_slots, std::move(keys)), never_(num_slots, 2) {}

  // Every dirty row is clean after this: the dirty `never_` rows join the
  // clean ones.
  StatusOr<std::vector<SlotKey>> TakeDirty(bool unwritten_in_flight = false) override {
    StatusOr<std::vector<SlotKey>> dirty = Base::TakeDirty(unwritten_in_flight);
    if (dirty.ok()) {
      while (!never_.empty(kDirtyRows)) {
        const int32_t slot = never_.front(kDirtyRows);
        never_.Remove(slot);
        never_.PushBack(slot, kCleanRows);
      }
    }
    return dirty;
  }

  Status SetStaticKeys(std::vector<int64_t> keys) override {
    if (this->config().hot_slots == 0) return Base::SetStaticKeys(std::move(keys));
    return this->AcceptStaticKeys(std::move(keys));
  }

 private:
  static constexpr int kCleanRows = 0, kDirtyRows = 1;  // the two `never_` lists

  int64_t NeverRows() const { return never_.size(kCleanRows) + never_.size(kDirtyRows); }
  // The next `never_` victim: the oldest clean row, else the oldest dirty
  // one; -1 when there is none.
  int32_t NeverVictim() const {
    return !never_.empty(kCleanRows) ? never_.front(kCleanRows) : never_.front(kDirtyRows);
  }

  // Indexes every batch up to t + W that was submitted.
  Status Prepare(int32_t t) {
    if (this->config().hot_slots > 0) FS_RETURN_IF_ERROR(this->NeedStaticKeys("the lookahead policy's static tier"));
    const int64_t last = std::min<int64_t>(static_cast<int64_t>(t) + this->config().lookahead,
                                           static_cast<int64_t>(this->window_.submitted()) - 1);
    for (; indexed_ <= last; ++indexed_) Index(indexed_);
    horizon_ = static_cast<int32_t>(last);
    return Status::OK();
  }

  void Index(int32_t b) {
    BatchRecord& rec = this->window_.at(b);
    const int32_t n = static_cast<int32_t>(rec.keys.size());
    rec.next.assign(n, BatchRecord::Link{kNever, 0});
    rec.candidates.Reset(n);
    const int64_t* keys = rec.keys.data();
    // Two-stage prefetch: the key's state 16 ahead, then (once that state
    // is cached) the link of its previous occurrence 8 ahead.
    constexpr int32_t kAhead = 16, kLinkAhead = 8;
    for (int32_t i = 0; i < n; ++i) {
      if (i + kAhead < n) this->keys_.Prefetch(keys[i + kAhead]);
      if (i + kLinkAhead < n && !Map::kSparse) {
        const LookaheadState& ahead = *this->keys_.Find(keys[i + kLinkAhead]);
        if (ahead.head1 != 0) __builtin_prefetch(&this->window_.at(ahead.tail_seq).next[ahead.tail_pos]);
      }
      LookaheadState& s = this->keys_.FindOrInsert(keys[i]);
      if (s.head1 == 0) {
        s.head1 = b + 1;
        s.head_pos = i;
        const int32_t slot = s.slot1 - 1;
        if (slot >= 0 && !this->slots_.pinned(slot)) {
          never_.Remove(slot);
          rec.candidates.Insert(i);
        }
      } else {
        this->window_.at(s.tail_seq).next[s.tail_pos] = BatchRecord::Link{b, i};
      }
      s.tail_seq = b;
      s.tail_pos = i;
    }
  }

  LookaheadState& StateOf(int64_t key) { return *this->keys_.Find(key); }  // indexed by Prepare

  // Pops the head occurrence (batch t, position i).
  void OnUse(LookaheadState& s, BatchRecord& rec, int32_t, int32_t i) {
    const BatchRecord::Link next = rec.next[i];
    if (next.seq == kNever) {
      s.head1 = 0;
    } else {
      s.head1 = next.seq + 1;
      s.head_pos = next.pos;
    }
  }

  // The slot was a candidate of the batch being planned, whose candidate set
  // is dropped whole.
  void OnPinned(int32_t) {}

  void OnUnpinned(int32_t slot, int64_t key) {
    const LookaheadState& s = *this->keys_.Find(key);
    if (s.head1 == 0) {
      never_.PushBack(slot, this->slots_.dirty(slot) ? kDirtyRows : kCleanRows);
    } else {
      this->window_.at(s.head1 - 1).candidates.Insert(s.head_pos);
    }
  }

  bool Idle(const LookaheadState& s) const { return s.head1 == 0; }

  void PlaceMisses(int32_t t, BatchRecord& rec, BatchPlan& plan) {
    const std::vector<int32_t>* misses = &this->misses_;
    if (this->config().hot_slots > 0 && !this->static_filled()) {
      this->FillStatic(this->config().hot_slots, /*pins=*/1, rec, plan);
      // The first batch's rows that the fill brought are placed.
      unplaced_.clear();
      for (const int32_t i : this->misses_) {
        if (rec.slots[i] < 0) unplaced_.push_back(i);
      }
      misses = &unplaced_;
    }
    AdmitMisses(t, rec, plan, *misses);
    if (this->config().page_rows > 1) AdmitCompanions(t, rec, plan);
  }

  // Belady's admission of `misses` (positions in batch t, none resident).
  void AdmitMisses(int32_t t, BatchRecord& rec, BatchPlan& plan, const std::vector<int32_t>& misses) {
    if (misses.empty()) return;
    const int32_t h = horizon_ - t;  // next uses are t + 1 .. t + h, or never (bucket h + 1)
    // Counting sort of the misses by next-use offset (stable: batch order).
    start_.assign(h + 3, 0);
    for (const int32_t i : misses) ++start_[Offset(rec, t, h, i) + 1];
    for (int32_t o = 1; o <= h + 2; ++o) start_[o] += start_[o - 1];
    order_.resize(misses.size());
    fill_ = start_;
    for (const int32_t i : misses) order_[fill_[Offset(rec, t, h, i)]++] = i;
    // above_[o]: evictable rows next used later than offset o.
    above_.assign(h + 2, 0);
    if (h >= 1) {
      above_[h] = NeverRows();
      for (int32_t o = h - 1; o >= 1; --o) above_[o] = above_[o + 1] + this->window_.at(t + o + 1).candidates.count();
    }

    const int64_t never_rows = NeverRows();
    int64_t free_left = this->slots_.num_free();
    int64_t consumed = 0;  // victims taken (always from the top of the order)
    cursor_ = horizon_;
    for (int32_t o = 1; o <= h + 1; ++o) {
      int32_t* first = order_.data() + start_[o];
      const int64_t m = start_[o + 1] - start_[o];
      if (m == 0) continue;
      const int64_t victims = o <= h ? above_[o] : never_rows;  // later next use, or both never
      const int64_t avail = free_left + std::max<int64_t>(0, victims - consumed);
      const int64_t take = std::min(m, avail);
      if (take == 0) break;  // later misses are no nearer: all bypass
      if (take < m && o <= h) {
        // Equal next use: the earlier position in that batch wins.
        std::sort(first, first + m, [&rec](int32_t a, int32_t b) { return rec.next[a].pos < rec.next[b].pos; });
      }
      for (int64_t j = 0; j < take; ++j) {
        if (free_left > 0) {
          --free_left;
          this->Admit(rec, plan, first[j], this->slots_.TakeFree());
        } else {
          ++consumed;
          evicting_.push_back(first[j]);
        }
      }
      if (take < m) break;
    }
    if (!evicting_.empty()) EvictAndAdmit(rec, plan);
  }

  void EvictAndAdmit(BatchRecord& rec, BatchPlan& plan) {
    // The victims are the top `consumed` rows of the eviction order; taking
    // them first lets their states be prefetched (each is a random access).
    TakeVictims(static_cast<int64_t>(evicting_.size()));
    constexpr size_t kAhead = 16;
    for (size_t j = 0; j < evicting_.size(); ++j) {
      if (j + kAhead < victims_.size()) this->keys_.Prefetch(this->slots_.key(victims_[j + kAhead]));
      EvictRow(victims_[j], plan);
      this->Admit(rec, plan, evicting_[j], victims_[j]);
    }
    evicting_.clear();
  }

  // Rows on the pages of batch t's misses that are not resident and are
  // next used inside the window (by batch b > t): each takes a free slot,
  // else the farthest victim if that one's next use is later than b (rows
  // with none first). They join the eviction order only after the pass, so
  // no companion displaces another of the same plan (two reads into one
  // slot in one submission).
  void AdmitCompanions(int32_t t, BatchRecord& rec, BatchPlan& plan) {
    const int64_t per_page =
        this->config().companion_rows > 0 ? this->config().companion_rows : this->config().page_rows;
    const int64_t space = this->config().key_space;
    pages_.clear();
    for (const int32_t i : this->misses_) pages_.push_back(rec.keys[i] / per_page);
    std::sort(pages_.begin(), pages_.end());
    pages_.erase(std::unique(pages_.begin(), pages_.end()), pages_.end());
    admitted_.clear();
    int32_t far = horizon_;  // the farthest batch that may still hold a victim
    for (const int64_t page : pages_) {
      const int64_t end = std::min(space, (page + 1) * per_page);
      for (int64_t key = page * per_page; key < end; ++key) {
        LookaheadState* s = this->keys_.Find(key);
        if (s == nullptr || s->slot1 != 0 || s->head1 == 0) continue;
        const int32_t next = s->head1 - 1;
        if (next <= t) continue;
        // Writable: a row whose last user is in flight may be that batch's
        // bypass row, written back only at its Release; the plan's reads
        // wait for the writers of its own keys, not of its companions.
        if (this->config().writable && s->last_user1 != 0 && this->window_.InFlight(s->last_user1 - 1)) continue;
        int32_t slot = -1;
        if (this->slots_.num_free() > 0) {
          slot = this->slots_.TakeFree();
        } else if (NeverVictim() >= 0) {
          slot = NeverVictim();
          never_.Remove(slot);
          EvictRow(slot, plan);
        } else {
          while (far > next && this->window_.at(far).candidates.count() == 0) --far;
          if (far <= next) continue;  // every evictable row is needed sooner
          BatchRecord& r = this->window_.at(far);
          const int32_t p = r.candidates.Last();
          r.candidates.Erase(p);
          slot = this->keys_.Find(r.keys[p])->slot1 - 1;
          EvictRow(slot, plan);
          s = this->keys_.Find(key);  // (a sparse map may have moved it)
        }
        s->slot1 = slot + 1;
        this->slots_.Assign(slot, key, /*pins=*/0);
        plan.fetches.push_back(SlotKey{key, slot});
        ++this->counters_.fetches;
        ++this->counters_.companions;
        admitted_.push_back(key);
      }
    }
    for (const int64_t key : admitted_) {
      const LookaheadState& s = *this->keys_.Find(key);
      this->window_.at(s.head1 - 1).candidates.Insert(s.head_pos);
    }
  }

  // Evicts `slot`. When its row is dirty and pages are known (page_rows),
  // the other dirty rows of its page that no batch in flight holds are
  // written back by the same plan and stay resident, clean: the store
  // writes the page once for all of them, where each would later cost a
  // write of its own (and on a disk store a read of the page first).
  // They keep their place in the eviction order.
  void EvictRow(int32_t slot, BatchPlan& plan) {
    const bool dirty = this->slots_.dirty(slot);
    const int64_t key = this->slots_.key(slot);
    this->Evict(slot, plan);
    const int64_t per_page = this->config().page_rows;
    if (!dirty || per_page <= 1 || this->config().key_space <= 0) return;
    const int64_t first = key / per_page * per_page;
    const int64_t end = std::min(this->config().key_space, first + per_page);
    for (int64_t k = first; k < end; ++k) {
      const LookaheadState* s = k == key ? nullptr : this->keys_.Find(k);
      if (s == nullptr || s->slot1 == 0) continue;
      const int32_t other = s->slot1 - 1;
      if (this->slots_.pinned(other) || !this->slots_.dirty(other)) continue;
      this->slots_.MarkClean(other);
      plan.writebacks.push_back(SlotKey{k, other});
      ++this->counters_.writebacks;
      ++this->counters_.page_writebacks;
    }
  }

  static int32_t Offset(const BatchRecord& rec, int32_t t, int32_t h, int32_t i) {
    const int32_t next = rec.next[i].seq;
    return next == kNever ? h + 1 : next - t;
  }

  // Takes the `count` unpinned rows used farthest in the future (they
  // exist) out of the eviction order, farthest first, into victims_.
  void TakeVictims(int64_t count) {
    victims_.clear();
    while (count > 0 && NeverVictim() >= 0) {
      const int32_t slot = NeverVictim();
      never_.Remove(slot);
      victims_.push_back(slot);
      --count;
    }
    for (; count > 0; --count) {
      while (this->window_.at(cursor_).candidates.count() == 0) --cursor_;
      BatchRecord& r = this->window_.at(cursor_);
      const int32_t p = r.candidates.Last();
      r.candidates.Erase(p);
      victim_keys_.push_back(r.keys[p]);
    }
    // Their slots are in their key states: fetch those ahead too.
    constexpr size_t kAhead = 16;
    for (size_t j = 0; j < victim_keys_.size(); ++j) {
      if (j + kAhead < victim_keys_.size()) this->keys_.Prefetch(victim_keys_[j + kAhead]);
      victims_.push_back(this->keys_.Find(victim_keys_[j])->slot1 - 1);
    }
    victim_keys_.clear();
  }

  SlotList never_;  // unpinned resident rows with no use in the window: clean, dirty
  int32_t indexed_ = 0;
  int32_t horizon_ = -1;
  int32_t cursor_ = 0;
  std::vector<int64_t> start_, fill_, above_;
  std::vector<int32_t> order_;
  std::vector<int32_t> evicting_;     // misses that evict, in order
  std::vector<int32_t> victims_;      // their slots, in the same order
  std::vector<int64_t> victim_keys_;  // scratch
  std::vector<int64_t> pages_;        // companions: pages of the plan's misses
  std::vector<int64_t> admitted_;     // companions admitted by the plan
  std::vector<int32_t> unplaced_;     // the first plan's misses outside the static tier
};

}  // namespace

std::unique_ptr<CachePlanner> MakeLookaheadPlanner(const CacheConfig& config, int32_t num_slots) {
  if (config.key_space > 0 && config.window_index_keys > 0) {
    // Dense keys indexed by a map of the keys held: the states of rows that
    // leave the window and the cache are erased (MaybeErase), as for
    // sparse keys; the key checks still use key_space.
    return std::make_unique<LookaheadPlanner<SparseKeyMap<LookaheadState>>>(
        config, num_slots, SparseKeyMap<LookaheadState>(config.window_index_keys));
  }
  if (config.key_space > 0) {
    return std::make_unique<LookaheadPlanner<DenseKeyMap<LookaheadState>>>(
        config, num_slots, DenseKeyMap<LookaheadState>(config.key_space));
  }
  return std::make_unique<LookaheadPlanner<SparseKeyMap<LookaheadState>>>(
      config, num_slots, SparseKeyMap<LookaheadState>(config.window_index_keys > 0 ? config.window_index_keys : 1024));
}

}  // namespace foresight::cache::internal

namespace foresight::cache {

int64_t LookaheadIndexBytes(const CacheConfig& config) {
  if (config.key_space > 0 && config.window_index_keys == 0) {
    return (config.key_space + 1) * static_cast<int64_t>(sizeof(internal::LookaheadState));
  }
  using Map = internal::SparseKeyMap<internal::LookaheadState>;
  return static_cast<int64_t>(Map::CapacityFor(config.window_index_keys) * Map::EntryBytes());
}

int64_t LookaheadWindowIndexBytesPerKey() {
  using Map = internal::SparseKeyMap<internal::LookaheadState>;
  return static_cast<int64_t>(Map::CapacityFor(1 << 20) / (1 << 20) * Map::EntryBytes());
}

int64_t LookaheadWindowIndexRoundingBytes() {
  // CapacityFor rounds up to a multiple of 64 entries.
  using Map = internal::SparseKeyMap<internal::LookaheadState>;
  return 64 * static_cast<int64_t>(Map::EntryBytes());
}

}  // namespace foresight::cache
