#include "batch_window.h"

#include <limits>
#include <utility>

namespace foresight::cache::internal {

Status BatchWindow::Submit(std::vector<int64_t> keys) {
  if (closed_) return FailedPrecondition("Submit: the planner was closed after batch " + std::to_string(submitted_ - 1));
  if (submitted_ == std::numeric_limits<int32_t>::max()) {
    return ResourceExhausted("Submit: more than 2^31-1 batches submitted to one planner");
  }
  FS_RETURN_IF_ERROR(check_.Check(keys, key_space_, "Submit: batch " + std::to_string(submitted_)));
  BatchRecord rec;
  if (!spare_.empty()) {
    rec = std::move(spare_.back());
    spare_.pop_back();
    rec.planned = rec.released = false;
  }
  rec.keys = std::move(keys);
  records_.push_back(std::move(rec));
  ++submitted_;
  return Status::OK();
}

bool BatchWindow::CanPlan() const {
  if (next_to_plan_ >= submitted_) return false;
  return closed_ || static_cast<int64_t>(submitted_) - next_to_plan_ - 1 >= lookahead_;
}

std::string BatchWindow::WhyNotPlannable() const {
  if (next_to_plan_ >= submitted_) {
    return "batch " + std::to_string(next_to_plan_) + " was not submitted" +
           (closed_ ? " and the planner is closed" : "");
  }
  return "batch " + std::to_string(next_to_plan_) + " needs " + std::to_string(lookahead_) +
         " submitted batches after it (lookahead) or Close(); " +
         std::to_string(submitted_ - next_to_plan_ - 1) + " are";
}

BatchRecord& BatchWindow::BeginPlan() {
  BatchRecord& r = at(next_to_plan_++);
  r.planned = true;
  ++in_flight_;
  return r;
}

StatusOr<BatchRecord*> BatchWindow::InFlightRecord(int64_t seq) {
  if (seq < 0 || seq >= next_to_plan_ || !InFlight(static_cast<int32_t>(seq))) {
    std::string state = seq < 0 || seq >= submitted_ ? "was never submitted"
                        : seq >= next_to_plan_       ? "was not planned yet"
                                                     : "was already released";
    return FailedPrecondition("Release: batch " + std::to_string(seq) + " is not in flight (it " + state + "; " +
                              std::to_string(in_flight_) + " batches are in flight)");
  }
  return &at(static_cast<int32_t>(seq));
}

void BatchWindow::FinishRelease(int32_t seq) {
  at(seq).released = true;
  --in_flight_;
  Trim();
}

void BatchWindow::Trim() {
  while (!records_.empty() && records_.front().released) {
    BatchRecord& r = records_.front();
    if (spare_.size() < 4) spare_.push_back(std::move(r));
    records_.pop_front();
    ++base_;
  }
}

}  // namespace foresight::cache::internal
