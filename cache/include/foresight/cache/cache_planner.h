// CachePlanner: the lookahead cache's brain. It sees the row keys of the
// coming batches (the sampler runs W batches ahead) and decides, batch by
// batch, which rows to fetch, where every row lives (a cache slot, or
// "bypass": read straight into the batch's own buffer), which slots to
// evict and which dirty rows to write back first. It never touches row
// data: the pipeline's read / assemble / write-back stages execute plans
// against a storage::RowStore and a slot array (host RAM today, GPU memory
// later), so the same planner serves node features (read-only) and DLRM
// embedding rows (written every step).
//
// Sequence numbers: batches are numbered 0, 1, 2, ... in Submit order,
// across epochs (the window crosses epoch boundaries).
//
// Pinning: a batch is "in flight" from PlanNext until Release. Slots used
// by in-flight batches are pinned: never evicted, never re-targeted.
//
// Read-after-write (writable caches): when batch t writes its rows and
// batch t+k (planned before t finished) needs one of them,
//  - if the row sits in a slot used by both, t+k reads the slot, and
//    plan(t+k).wait_for_seq >= t tells the pipeline not to read or assemble
//    t+k's rows before Release(t);
//  - if t had it as a bypass row (written back to the store by t), t+k
//    fetches it, and again waits for Release(t) (which the caller issues
//    only once t's bypass write-backs completed) before any read;
//  - a dirty row evicted by a plan is listed in its `writebacks`; the read
//    stage executes plans in sequence order and completes a plan's
//    write-backs before issuing its fetches, so a later fetch of that key
//    reads the written value.
// So: execute plans in order; before reading or assembling plan p, wait
// until every batch <= p.wait_for_seq was released (the same as waiting for
// Release(p.wait_for_seq) when batches are released in order); within a
// plan, write-backs, then fetches and bypass reads. For read-only caches
// wait_for_seq is always -1.
//
// Policies (capacity in bytes; slots = capacity / row_bytes):
//  lookahead  On a miss, evict the unpinned resident row whose next use in
//             the window is farthest (never = infinitely far); a missing row
//             whose own next use is farther than every evictable row's is
//             not admitted (bypass). Equal next uses in the window keep the
//             resident row; rows with no use in the window are replaced
//             oldest (least recently released) first, so beyond the window
//             the policy is LRU. A batch's misses are admitted nearest next
//             use first. Ties among rows next used by the same batch go by
//             position in that batch (the later position is evicted first,
//             the earlier admitted first). With page_rows > 1 a miss's page
//             companions are admitted after the batch's misses, by the same
//             rule, never evicting a row admitted by the same plan. With a window covering the whole
//             trace this is Belady's MIN with bypass at batch granularity (a
//             batch's own rows stay pinned while it is planned). With
//             hot_slots > 0, a static tier (as the static policy, below)
//             holds the hottest rows beside it; the fill's rows that the
//             first batch reads count as its misses, as for static.
//  lru        Evict the least recently used unpinned row; admit every miss
//             while an unpinned slot exists, else bypass.
//  static     Filled once, on the first plan, with the first num_slots keys
//             given to SetStaticKeys (e.g. by degree or access frequency);
//             never evicts; other rows are bypass reads. The fill's rows
//             that the first batch reads count as its misses.
// A batch needing more rows than it can get slots for (all slots pinned or
// the batch larger than the cache) gets bypass rows for the rest.
//
// Determinism: plans are a pure function of the config, the submitted key
// lists and the order of the calls (which batches are in flight when a
// batch is planned decides what is pinned), never of timing: a pipeline
// that plans batch t+d only after Release(t) gets the same plans every run.
// Ties are broken by key-list positions, never by hashing or addresses, so
// dense and sparse keys give the same plans.
//
// Thread safety: none; one plan stage owns the planner. Release may come
// from another stage through that owner (e.g. a queue), not concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::cache {

enum class Policy { kLookahead, kLru, kStatic };
// "lookahead", "lru", "static"; InvalidArgument naming the choices otherwise.
StatusOr<Policy> ParsePolicy(const std::string& name);
const char* PolicyName(Policy p);

inline constexpr int64_t kBypass = -1;

struct CacheConfig {
  Policy policy = Policy::kLookahead;
  int64_t capacity_bytes = 0;  // may be 0: every row bypasses
  int64_t row_bytes = 0;       // > 0
  // W: batches submitted beyond the one being planned that the planner may
  // look at (every policy accepts it; only lookahead uses what it sees).
  int lookahead = 8;
  // Rows may be updated by batches (Release(seq, wrote=true) marks them
  // dirty); enables write-backs and wait_for_seq.
  bool writable = false;
  // When > 0, keys are dense in [0, key_space) (node ids) and the planner
  // uses flat arrays of that size (lookahead: 24 bytes a key, lru and
  // static: 8, touched lazily); 0 means sparse 64-bit keys (hash maps;
  // any int64 but INT64_MIN).
  int64_t key_space = 0;
  // Lookahead with dense keys: when > 0, the per-key states live in a hash
  // map made for this many keys (it grows past them) instead of the flat
  // array of key_space states, and only the keys the planner holds have
  // one: the resident rows and those of the window's and the in-flight
  // batches. For a key space far larger than the cache (embedding tables
  // on disk) that is much smaller; the plans are the same. A bound:
  // num_slots + the keys of W + 2 batches. Default: 0 (the flat array)
  int64_t window_index_keys = 0;
  // Lookahead with dense keys on a store that reads whole pages (disk,
  // O_DIRECT): rows per page (keys k with the same k / page_rows share
  // one). When > 1, the rows that share a page with a batch's miss, are
  // not resident and are used inside the window come along ("companions":
  // fetched into slots by the same plan, so the store serves them from the
  // same read) whenever Belady admits them: a free slot, or a victim whose
  // next use is later than theirs. On a writable cache, a dirty row's
  // eviction also writes back the page's other dirty rows that no batch in
  // flight holds (they stay resident, clean: one page write for all).
  // Plans stay a pure function of the key
  // lists; rows still reach batches unchanged. On a writable cache a row
  // whose last user is still in flight is not a companion (it may be that
  // batch's bypass row, not yet written back). Default: 0 (off)
  int64_t page_rows = 0;
  // Lookahead with page_rows > 1: the companions of a miss are taken from
  // the aligned span of this many rows around it instead of its page (a
  // multiple of page_rows). On a store that joins nearby reads (disk,
  // RowStoreOptions::max_read_gap_bytes) a span of several pages brings
  // more of the window's rows with each read: under the partition order a
  // group's rows are contiguous in the file and read sparsely, batch by
  // batch. Write-back still groups by page. 0: page_rows (the page)
  int64_t companion_rows = 0;
  // Lookahead only: a static tier of this many slots beside the lookahead
  // tier. The first plan fetches the first hot_slots keys given to
  // SetStaticKeys (the hottest rows, e.g. by in-degree) into slots
  // [0, hot_slots); they stay for the planner's life, never evicted, so
  // they are read once; the other num_slots - hot_slots slots are the
  // lookahead tier, planned as above over the remaining rows. Fewer keys
  // than hot_slots leave the rest to the lookahead tier. At most
  // num_slots. Default: 0 (no static tier)
  int64_t hot_slots = 0;
};

// Bytes of the lookahead planner's per-key index: the flat array over
// key_space (dense keys, window_index_keys 0), else the hash map made for
// window_index_keys keys (as long as it holds no more).
int64_t LookaheadIndexBytes(const CacheConfig& config);
// The window index's bytes per key it is made for (a 32-byte entry, the
// map at most half full), and the most its rounding adds to a map: what a
// memory plan charges per cache slot and per key of the window.
int64_t LookaheadWindowIndexBytesPerKey();
int64_t LookaheadWindowIndexRoundingBytes();

// Bytes of any policy's per-key index at most: LookaheadIndexBytes for
// lookahead; for lru and static with dense keys their flat array over
// key_space (8 bytes a key, touched lazily: it grows to this as keys are
// met), with sparse keys a map entry per resident key (counted per slot).
int64_t PlannerIndexBytes(const CacheConfig& config);

// Bytes the planner keeps for each cache slot beside its row: the slot
// table's key (8), pin count (4), dirty flag (1) and free-stack entry (4);
// the eviction list's links (8; lookahead and lru) and lookahead's byte
// naming its clean or dirty list (1). A sparse map's entry for the slot's
// key is not included (PlannerIndexBytes and the window index count those).
// With rows of tens of bytes (16 f16 features) the records cost as much as
// the row, so a budget pays both.
int64_t SlotRecordBytes(const CacheConfig& config);

struct SlotKey {
  int64_t key = 0;
  int64_t slot = 0;
};

// The plan of one batch.
struct BatchPlan {
  int64_t seq = 0;
  // The batch's keys as submitted (distinct), and per key its slot in
  // [0, num_slots()) or kBypass.
  std::vector<int64_t> keys;
  std::vector<int64_t> location;
  // I/O to perform, in this order: write slot contents to the store as
  // `key` (dirty rows evicted by this plan; with lookahead and page_rows
  // also the dirty unpinned rows on their pages, which stay resident) ...
  std::vector<SlotKey> writebacks;
  // ... then read `key` into `slot` (misses admitted to the cache; also the
  // static policy's initial fill, carried by the first plan) ...
  std::vector<SlotKey> fetches;
  // ... and read keys[i] for each i here into the batch's own buffer.
  std::vector<int64_t> bypass;
  // -1, or the sequence number up to which every batch must be released
  // before any read or assembly of this batch's rows (read-after-write;
  // writable only).
  int64_t wait_for_seq = -1;
  // keys already resident (or fetched for an earlier plan) / the rest
  // (misses = this batch's rows that this plan reads from the store).
  int64_t hits = 0;
  int64_t misses = 0;
};

struct CacheCounters {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t fetches = 0;     // rows read into slots (incl. static fill and companions)
  int64_t companions = 0;  // rows fetched because they share a page with a miss
  int64_t bypassed = 0;    // rows read around the cache
  int64_t evictions = 0;
  int64_t writebacks = 0;  // rows written back (incl. page_writebacks)
  // dirty rows written back with an evicted row's page, kept resident
  int64_t page_writebacks = 0;
};

class CachePlanner {
 public:
  // InvalidArgument for row_bytes <= 0, negative capacity, lookahead or
  // key_space, or 2^31-1 slots or more.
  static StatusOr<std::unique_ptr<CachePlanner>> Create(const CacheConfig& config);
  virtual ~CachePlanner() = default;

  const CacheConfig& config() const { return config_; }
  int64_t num_slots() const { return num_slots_; }

  // static: keys in priority order (the first num_slots() fill the cache
  // on the first plan); lookahead with hot_slots > 0: the same for its
  // static tier (the first hot_slots). FailedPrecondition for other
  // policies or after the first plan.
  virtual Status SetStaticKeys(std::vector<int64_t> keys) = 0;

  // Appends the next batch's distinct keys (InvalidArgument on a repeated
  // key or one outside [0, key_space), naming it and its position; at most
  // 2^30-1 keys a batch and 2^31-1 batches; FailedPrecondition after
  // Close()).
  virtual Status Submit(std::vector<int64_t> keys) = 0;
  // No more batches will be submitted (the last W can then be planned).
  virtual void Close() = 0;
  // The next unplanned batch was submitted and either `lookahead` more
  // after it, or Close() was called.
  virtual bool CanPlan() const = 0;
  // Plans the next batch (FailedPrecondition when !CanPlan(), or for the
  // static policy or a static tier before SetStaticKeys).
  virtual StatusOr<BatchPlan> PlanNext() = 0;
  // Batch `seq` is done (its compute, and the write-back of its bypass rows
  // when it wrote any): unpins its slots; with `wrote`, its slot rows
  // become dirty. FailedPrecondition when seq is not in flight;
  // InvalidArgument for wrote=true on a read-only cache.
  virtual Status Release(int64_t seq, bool wrote) = 0;
  // Resident dirty rows, marked clean (the final flush writes them back).
  // Only between batches: FailedPrecondition while a batch is in flight,
  // unless `unwritten_in_flight`: the caller vouches that the batches in
  // flight were planned ahead and are not changing their rows (a later
  // Release(wrote) marks them dirty again).
  virtual StatusOr<std::vector<SlotKey>> TakeDirty(bool unwritten_in_flight = false) = 0;

  // Batches planned and not released.
  virtual int64_t in_flight() const = 0;
  virtual CacheCounters counters() const = 0;

 protected:
  CachePlanner(const CacheConfig& config, int64_t num_slots) : config_(config), num_slots_(num_slots) {}

 private:
  CacheConfig config_;
  int64_t num_slots_;
};

}  // namespace foresight::cache
