// The read-after-write rule, executed: a simulated pipeline runs the plans
// against an array "store" and a slot array, plans and reads as early as
// the header's rules allow (several batches planned and read before earlier
// ones computed), and each batch adds 1 to every row it reads. Every value
// read, and the store after the final TakeDirty flush, must equal the
// sequential execution.
#include <deque>
#include <map>

#include "cache_test_util.h"

namespace foresight::cache::testing {
namespace {

int64_t Initial(int64_t key) { return 1000 * key; }

void RunPipeline(const CacheConfig& config, const Trace& trace, int depth) {
  ASSERT_OK_AND_ASSIGN(auto planner, CachePlanner::Create(config));
  if (config.policy == Policy::kStatic || config.hot_slots > 0) ASSERT_OK(planner->SetStaticKeys(ByFrequency(trace)));
  const int64_t num_slots = planner->num_slots();
  std::map<int64_t, int64_t> store;  // absent: Initial(key)
  auto load = [&](int64_t k) { auto it = store.find(k); return it == store.end() ? Initial(k) : it->second; };
  std::vector<int64_t> slot_data(num_slots, -1);
  std::map<int64_t, int64_t> uses;  // key -> batches computed so far (the sequential value)

  std::deque<BatchPlan> to_read;                    // planned, I/O not executed
  std::map<int64_t, std::pair<BatchPlan, std::vector<int64_t>>> ready;  // read: seq -> plan, values
  size_t submitted = 0;
  int64_t planned = 0, computed = 0;
  const int64_t n = static_cast<int64_t>(trace.size());
  while (computed < n) {
    // 1. Plan as early as the pipeline depth allows.
    if (planned < n && planner->in_flight() < depth) {
      while (!planner->CanPlan()) {
        ASSERT_LT(submitted, trace.size());
        ASSERT_OK(planner->Submit(trace[submitted++]));
        if (submitted == trace.size()) planner->Close();
      }
      ASSERT_OK_AND_ASSIGN(BatchPlan p, planner->PlanNext());
      if (!config.writable) {
        EXPECT_EQ(p.wait_for_seq, -1);
      }
      EXPECT_LT(p.wait_for_seq, p.seq);
      to_read.push_back(std::move(p));
      ++planned;
      continue;
    }
    // 2. Read stage, in plan order, once every batch <= wait_for_seq was
    // released (batches are computed and released in order here).
    if (!to_read.empty() && to_read.front().wait_for_seq < computed) {
      BatchPlan p = std::move(to_read.front());
      to_read.pop_front();
      for (const SlotKey& wb : p.writebacks) store[wb.key] = slot_data[wb.slot];
      for (const SlotKey& f : p.fetches) slot_data[f.slot] = load(f.key);
      std::vector<int64_t> values(p.keys.size());
      for (size_t i = 0; i < p.keys.size(); ++i) {
        values[i] = p.location[i] == kBypass ? load(p.keys[i]) : slot_data[p.location[i]];  // read / assemble
      }
      const int64_t seq = p.seq;
      ready.emplace(seq, std::make_pair(std::move(p), std::move(values)));
      continue;
    }
    // 3. Compute the oldest batch, write its rows, release it.
    auto it = ready.find(computed);
    ASSERT_TRUE(it != ready.end()) << "pipeline stuck at batch " << computed;
    const BatchPlan& p = it->second.first;
    const std::vector<int64_t>& values = it->second.second;
    for (size_t i = 0; i < p.keys.size(); ++i) {
      const int64_t k = p.keys[i];
      const int64_t expected = Initial(k) + (config.writable ? uses[k] : 0);
      ASSERT_EQ(values[i], expected) << "batch " << p.seq << " read key " << k << " stale (location "
                                     << p.location[i] << ", wait_for_seq " << p.wait_for_seq << ")";
      if (!config.writable) continue;
      ++uses[k];
      if (p.location[i] == kBypass) {
        store[k] = values[i] + 1;  // bypass rows are written back before Release
      } else {
        slot_data[p.location[i]] = values[i] + 1;
      }
    }
    ASSERT_OK(planner->Release(p.seq, config.writable));
    ready.erase(it);
    ++computed;
  }
  ASSERT_OK_AND_ASSIGN(std::vector<SlotKey> dirty, planner->TakeDirty());
  if (!config.writable) {
    EXPECT_TRUE(dirty.empty());
  }
  for (const SlotKey& d : dirty) store[d.key] = slot_data[d.slot];
  for (const auto& [k, count] : uses) EXPECT_EQ(load(k), Initial(k) + count) << "final value of key " << k;
  ASSERT_OK_AND_ASSIGN(std::vector<SlotKey> again, planner->TakeDirty());
  EXPECT_TRUE(again.empty());
}

TEST(ReadAfterWrite, PipelinedPlansNeverReadStaleRows) {
  const Trace traces[] = {UniformTrace(30, 6, 20, 31), ZipfTrace(30, 6, 40, 1.2, 32), NeighbourhoodTrace(30, 6, 60, 33)};
  for (const Trace& trace : traces) {
    for (Policy policy : {Policy::kLookahead, Policy::kLru, Policy::kStatic}) {
      for (int64_t slots : {0, 1, 2, 3, 5, 8}) {
        for (int depth : {1, 2, 3, 4}) {
          for (int window : {0, 2, 40}) {
            for (bool writable : {true, false}) {
              for (int64_t key_space : {int64_t{100}, int64_t{0}}) {
                // Lookahead on dense keys also with pages of 4 rows: companions
                // and a page's dirty rows written back together.
                const bool pages = policy == Policy::kLookahead && key_space > 0;
                for (int64_t page_rows : pages ? std::vector<int64_t>{0, 4} : std::vector<int64_t>{0}) {
                  SCOPED_TRACE(std::string(PolicyName(policy)) + " slots " + std::to_string(slots) + " depth " +
                               std::to_string(depth) + " window " + std::to_string(window) +
                               (writable ? " writable" : " read-only") + " key_space " + std::to_string(key_space) +
                               " page_rows " + std::to_string(page_rows));
                  CacheConfig c = Config(policy, slots, window, key_space, writable);
                  c.page_rows = page_rows;
                  RunPipeline(c, trace, depth);
                  if (HasFatalFailure()) return;
                }
              }
            }
          }
        }
      }
    }
  }
}

// The lookahead policy with a static tier of the most used rows beside it:
// hot rows written by a batch stay dirty in their slot (never evicted) until
// the final flush, and later batches wait for the writer.
TEST(ReadAfterWrite, AStaticTierBesideLookaheadNeverReadsStaleRows) {
  const Trace traces[] = {UniformTrace(30, 6, 20, 41), ZipfTrace(30, 6, 40, 1.2, 42), NeighbourhoodTrace(30, 6, 60, 43)};
  for (const Trace& trace : traces) {
    for (int64_t slots : {1, 3, 8}) {
      for (int64_t hot : {int64_t{1}, slots / 2, slots}) {
        for (int depth : {1, 3}) {
          for (int window : {0, 40}) {
            for (bool writable : {true, false}) {
              SCOPED_TRACE("slots " + std::to_string(slots) + " hot " + std::to_string(hot) + " depth " +
                           std::to_string(depth) + " window " + std::to_string(window) +
                           (writable ? " writable" : " read-only"));
              CacheConfig c = Config(Policy::kLookahead, slots, window, 100, writable);
              c.hot_slots = hot;
              RunPipeline(c, trace, depth);
              if (HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace foresight::cache::testing
