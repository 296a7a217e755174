#include "cpu_budget.h"

#include <future>

namespace foresight::trainer::internal {

Status CpuBudget::Run(const std::function<Status()>& step) {
  if (single()) {
    std::lock_guard<std::mutex> lock(single_mu_);
    return step();
  }
  Status result;
  std::future<void> done = pool_->Submit([&] { result = step(); });
  done.wait();  // passive: the stage thread sleeps while a worker runs the step
  return result;
}

std::unique_lock<std::mutex> CpuBudget::ComputeTurn() {
  if (single()) return std::unique_lock<std::mutex>(single_mu_);
  return std::unique_lock<std::mutex>();
}

}  // namespace foresight::trainer::internal
