// Accounting and control shared by the pipeline's stages: the per-epoch
// ledger of busy / waiting seconds and cache / I/O counters (attributed by
// batch: work done for a batch counts in that batch's epoch, even when a
// lookahead stage does it while the previous epoch is still training), and
// the control block that stops every stage on the first error. Private to
// the trainer.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/trainer/trainer.h"

namespace foresight::trainer::internal {

// The stages, in pipeline order.
enum class Stage { kSample = 0, kPlan, kRead, kAssemble, kCompute, kWriteBack };
inline constexpr int kNumStages = 6;
// "sample", "plan", "read", "assemble", "compute", "write_back".
const char* StageName(Stage stage);

// Cache and store counters of one batch (or a sum of batches). On the
// direct row path (no cache, rows gathered in place) they read as the
// cached path's would with an empty cache: hits 0, every row a miss, and
// bytes_read the row bytes a memory / mmap store reports for reading them.
struct BatchIo {
  int64_t rows_requested = 0;  // distinct input rows of the batch
  int64_t hits = 0;            // rows served by a cache slot
  int64_t misses = 0;          // rows this batch read from the store
  int64_t bytes_read = 0;      // store device bytes (after alignment)
  int64_t bytes_written = 0;
  // Store I/O operations issued for the reads (after coalescing: one op
  // may serve several rows); 0 for memory and mmap stores (copies).
  int64_t reads = 0;
  // Rows the store read: the misses and the page companions fetched with
  // them (cache/cache_planner.h), bypass rows included.
  int64_t rows_read = 0;

  void Add(const BatchIo& o) {
    rows_requested += o.rows_requested;
    hits += o.hits;
    misses += o.misses;
    bytes_read += o.bytes_read;
    bytes_written += o.bytes_written;
    reads += o.reads;
    rows_read += o.rows_read;
  }
};

struct EpochAccount {
  std::array<StageSeconds, kNumStages> stages{};
  BatchIo io;
};

// Thread-safe per-epoch sums.
class EpochLedger {
 public:
  void AddTime(Stage stage, int64_t epoch, double busy, double wait);
  void AddIo(int64_t epoch, const BatchIo& io);
  // Returns epoch's sums and forgets them.
  EpochAccount Take(int64_t epoch);
  // Epoch's sums so far.
  EpochAccount Peek(int64_t epoch);

 private:
  std::mutex mu_;
  std::map<int64_t, EpochAccount> epochs_;
};

// The first error of any stage, the shutdown switch, and the release
// counter that read-after-write waits use. Thread-safe.
class PipelineControl {
 public:
  // Callbacks that abort every blocking point (queue cancels); registered
  // before the stages start.
  void OnCancel(std::function<void()> fn) { cancel_fns_.push_back(std::move(fn)); }

  // Records the first failure as "pipeline stage '<stage>': <message>"
  // (same code) and cancels everything. Later failures are dropped: they
  // are usually the cancellation itself.
  void Fail(Stage stage, const Status& status);
  // Stops every stage without an error (shutdown). Idempotent.
  void Cancel();
  bool cancelled() const;
  // OK, or the first failure.
  Status error() const;

  // Batches are released in sequence order; `seq` and every earlier one are
  // done.
  void MarkReleased(int64_t seq);
  // Blocks until MarkReleased(>= seq) or cancellation (then false).
  bool WaitReleased(int64_t seq);
  int64_t released_through() const;

 private:
  void RunCancels();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  Status error_;
  bool cancelled_ = false;
  int64_t released_through_ = -1;
  std::vector<std::function<void()>> cancel_fns_;
};

}  // namespace foresight::trainer::internal
