// BatchWindow: the batches the planner knows about, by sequence number:
// submitted (keys validated), planned (in flight until released), released.
// It keeps the record of every batch from the oldest one still in flight
// (or the next to plan) to the last submitted, and says when the next
// batch may be planned (W more submitted after it, or closed).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "key_list_check.h"
#include "position_set.h"

namespace foresight::cache::internal {

inline constexpr int32_t kNever = -1;  // no next use inside the window

struct BatchRecord {
  std::vector<int64_t> keys;
  // Set by PlanNext: the slot of every position, or -1 (bypass).
  std::vector<int32_t> slots;
  bool planned = false;
  bool released = false;
  // Lookahead only, set when the batch enters the window: per position, the
  // key's next occurrence after this batch (sequence number and position
  // there, or kNever: one struct, one cache line to touch when linking), and
  // the eviction candidates next used by this batch.
  struct Link {
    int32_t seq;
    int32_t pos;
  };
  std::vector<Link> next;
  PositionSet candidates;
};

class BatchWindow {
 public:
  BatchWindow(int64_t key_space, int lookahead) : key_space_(key_space), lookahead_(lookahead) {}

  Status Submit(std::vector<int64_t> keys);
  void Close() { closed_ = true; }
  bool closed() const { return closed_; }

  int32_t submitted() const { return submitted_; }
  int32_t next_to_plan() const { return next_to_plan_; }
  int64_t in_flight() const { return in_flight_; }
  bool CanPlan() const;
  // Why !CanPlan(), for the error message.
  std::string WhyNotPlannable() const;

  // seq must be in [first kept, submitted()).
  BatchRecord& at(int32_t seq) { return records_[static_cast<size_t>(seq - base_)]; }
  bool InFlight(int32_t seq) const {
    if (seq < base_ || seq >= next_to_plan_) return false;
    const BatchRecord& r = records_[static_cast<size_t>(seq - base_)];
    return r.planned && !r.released;
  }

  // Marks the next batch planned (in flight) and returns it.
  BatchRecord& BeginPlan();
  // The record of in-flight `seq`, or FailedPrecondition naming it.
  StatusOr<BatchRecord*> InFlightRecord(int64_t seq);
  // Marks `seq` released and drops records no longer needed.
  void FinishRelease(int32_t seq);

 private:
  void Trim();

  int64_t key_space_;
  int lookahead_;
  KeyListCheck check_;
  std::deque<BatchRecord> records_;  // sequence numbers [base_, submitted_)
  std::vector<BatchRecord> spare_;   // dropped records, buffers kept for reuse
  int32_t base_ = 0;
  int32_t submitted_ = 0;
  int32_t next_to_plan_ = 0;
  int64_t in_flight_ = 0;
  bool closed_ = false;
};

}  // namespace foresight::cache::internal
