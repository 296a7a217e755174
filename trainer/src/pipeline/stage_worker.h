// StageWorker: one pipeline stage's thread and its bookkeeping. The body
// loops Pop -> work -> Push; the worker times the blocking ends (waiting)
// and the work (busy) and books them in the epoch of the batch concerned.
// A body's error stops the whole pipeline (PipelineControl::Fail names the
// stage); a body that returns because its input was cancelled returns OK.
// Private to the trainer.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "bounded_queue.h"
#include "stage_clock.h"

namespace foresight::trainer::internal {

// Seconds between construction (or the last Lap) and now.
class StageTimer {
 public:
  StageTimer() : start_(std::chrono::steady_clock::now()) {}
  double Lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - start_).count();
    start_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

class StageWorker {
 public:
  StageWorker(Stage stage, PipelineControl* control, EpochLedger* ledger)
      : stage_(stage), control_(control), ledger_(ledger) {}
  ~StageWorker() { Join(); }
  StageWorker(const StageWorker&) = delete;
  StageWorker& operator=(const StageWorker&) = delete;

  // Runs `body` on a new thread.
  void Start(std::function<Status()> body) {
    thread_ = std::thread([this, body = std::move(body)] {
      const Status s = body();
      if (!s.ok()) control_->Fail(stage_, s);
    });
  }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }

  Stage stage() const { return stage_; }

  // Pop / Push that add the blocked time to *waited.
  template <typename T>
  bool Pop(BoundedQueue<T>& q, T* out, double* waited) {
    StageTimer t;
    const bool ok = q.Pop(out);
    *waited += t.Lap();
    return ok;
  }
  template <typename T>
  bool Push(BoundedQueue<T>& q, T item, double* waited) {
    StageTimer t;
    const bool ok = q.Push(std::move(item));
    *waited += t.Lap();
    return ok;
  }

  void Book(int64_t epoch, double busy, double wait) { ledger_->AddTime(stage_, epoch, busy, wait); }

 private:
  Stage stage_;
  PipelineControl* control_;
  EpochLedger* ledger_;
  std::thread thread_;
};

}  // namespace foresight::trainer::internal
