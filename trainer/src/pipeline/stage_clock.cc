#include "stage_clock.h"

namespace foresight::trainer::internal {

const char* StageName(Stage stage) {
  switch (stage) {
    case Stage::kSample: return "sample";
    case Stage::kPlan: return "plan";
    case Stage::kRead: return "read";
    case Stage::kAssemble: return "assemble";
    case Stage::kCompute: return "compute";
    case Stage::kWriteBack: return "write_back";
  }
  return "?";
}

void EpochLedger::AddTime(Stage stage, int64_t epoch, double busy, double wait) {
  std::lock_guard<std::mutex> lock(mu_);
  StageSeconds& s = epochs_[epoch].stages[static_cast<int>(stage)];
  s.busy += busy;
  s.wait += wait;
}

void EpochLedger::AddIo(int64_t epoch, const BatchIo& io) {
  std::lock_guard<std::mutex> lock(mu_);
  epochs_[epoch].io.Add(io);
}

EpochAccount EpochLedger::Take(int64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = epochs_.find(epoch);
  if (it == epochs_.end()) return EpochAccount();
  EpochAccount a = it->second;
  epochs_.erase(it);
  return a;
}

EpochAccount EpochLedger::Peek(int64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = epochs_.find(epoch);
  return it == epochs_.end() ? EpochAccount() : it->second;
}

void PipelineControl::Fail(Stage stage, const Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok() || cancelled_) return;  // the first error wins; after shutdown errors are echoes
    error_ = Status(status.code(), "pipeline stage '" + std::string(StageName(stage)) + "': " + status.message());
    cancelled_ = true;
  }
  cv_.notify_all();
  RunCancels();
}

void PipelineControl::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
  }
  cv_.notify_all();
  RunCancels();
}

void PipelineControl::RunCancels() {
  for (const auto& fn : cancel_fns_) fn();
}

bool PipelineControl::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

Status PipelineControl::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

void PipelineControl::MarkReleased(int64_t seq) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (seq > released_through_) released_through_ = seq;
  }
  cv_.notify_all();
}

bool PipelineControl::WaitReleased(int64_t seq) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return cancelled_ || released_through_ >= seq; });
  return released_through_ >= seq;
}

int64_t PipelineControl::released_through() const {
  std::lock_guard<std::mutex> lock(mu_);
  return released_through_;
}

}  // namespace foresight::trainer::internal
