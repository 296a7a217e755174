#include "io_worker.h"

#include <utility>

namespace foresight::embed::internal {

IoWorker::IoWorker() : thread_([this] { Run(); }) {}

IoWorker::~IoWorker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_.notify_one();
  thread_.join();
}

int64_t IoWorker::Post(std::function<Status()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  work_.notify_one();
  return ++posted_;
}

Status IoWorker::Wait(int64_t ticket) {
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return completed_ >= ticket; });
  return error_;
}

void IoWorker::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and every job ran
    std::function<Status()> job = std::move(jobs_.front());
    jobs_.pop_front();
    const bool failed = !error_.ok();
    lock.unlock();
    Status s = failed ? Status::OK() : job();
    lock.lock();
    if (!s.ok() && error_.ok()) error_ = std::move(s);
    ++completed_;
    done_.notify_all();
  }
}

}  // namespace foresight::embed::internal
