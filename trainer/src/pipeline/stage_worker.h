// StageWorker: one pipeline stage's thread and its bookkeeping. The body
// loops Pop -> work -> Push; the worker times the blocking ends (waiting)
// and the work (busy) and books them in the epoch of the batch concerned.
// A body's error stops the whole pipeline (PipelineControl::Fail names the
// stage); a body that returns because its input was cancelled returns OK.
// Private to the trainer.
#pragma once

#include <functional>
#include <thread>

#include "bounded_queue.h"
#include "foresight/core/status.h"
#include "foresight/core/stopwatch.h"
#include "stage_clock.h"

namespace foresight::trainer::internal {

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
    Stopwatch t;
    const bool ok = q.Pop(out);
    *waited += t.Lap();
    return ok;
  }
  template <typename T>
  bool Push(BoundedQueue<T>& q, T item, double* waited) {
    Stopwatch t;
    const bool ok = q.Push(std::move(item));
    *waited += t.Lap();
    return ok;
  }

  void Book(int64_t epoch, double busy, double wait) { ledger_->AddTime(stage_, epoch, busy, wait); }

  // The loop of a stage between two queues: pops every item of `in` (a
  // pointer to a batch with an `epoch`), runs work(item, &busy, &waited),
  // pushes the item on to `out` and books busy and waited (work adds its
  // own blocking to waited and reports its busy seconds). work returns
  // false to stop quietly (it saw a cancellation); its error stops the
  // stage. `out` is closed once `in` is drained, unless the pipeline was
  // cancelled.
  template <typename T, typename Work>
  Status Relay(BoundedQueue<T>& in, BoundedQueue<T>& out, Work&& work) {
    for (;;) {
      T item;
      double waited = 0;
      if (!Pop(in, &item, &waited)) break;
      double busy = 0;
      FS_ASSIGN_OR_RETURN(const bool go_on, work(item, &busy, &waited));
      if (!go_on) return Status::OK();
      const int64_t epoch = item->epoch;
      const bool pushed = Push(out, std::move(item), &waited);
      Book(epoch, busy, waited);
      if (!pushed) return Status::OK();
    }
    if (control_->cancelled()) return Status::OK();
    out.Close();
    return Status::OK();
  }

 private:
  Stage stage_;
  PipelineControl* control_;
  EpochLedger* ledger_;
  std::thread thread_;
};

}  // namespace foresight::trainer::internal
