#include "test_points.h"

#include <atomic>
#include <cerrno>
#include <mutex>
#include <string>
#include <utility>

#include "foresight/core/test_kill_point.h"

namespace foresight::trainer::internal {

namespace {

std::atomic<int64_t> g_passed{0};        // points passed since the last SetFailAtPointForTesting
std::atomic<int64_t> g_fail_at{0};       // 0 = off
std::atomic<bool> g_recording{false};        // set by the first SetFailAtPointForTesting
std::mutex g_names_mu;
std::vector<std::string> g_names;            // points passed since then, while recording

}  // namespace

Status TestPoint(const char* name) {
  TestKillPoint(name);
  const int64_t passed = g_passed.fetch_add(1, std::memory_order_relaxed) + 1;
  if (g_recording.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(g_names_mu);
    g_names.emplace_back(name);
  }
  const int64_t fail_at = g_fail_at.load(std::memory_order_relaxed);
  if (fail_at > 0 && passed == fail_at) {
    return ErrnoError(std::string("write (test point ") + name + ")", ENOSPC);
  }
  return Status::OK();
}

std::vector<std::string> SetFailAtPointForTesting(int64_t n) {
  std::lock_guard<std::mutex> lock(g_names_mu);
  g_fail_at.store(n > 0 ? n : 0, std::memory_order_relaxed);
  g_passed.store(0, std::memory_order_relaxed);
  g_recording.store(true, std::memory_order_relaxed);
  return std::exchange(g_names, {});
}

}  // namespace foresight::trainer::internal
