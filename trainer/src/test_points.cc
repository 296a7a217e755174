#include "test_points.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>

namespace foresight::trainer::internal {

namespace {

std::atomic<int64_t> g_passed{0};        // points passed since the last SetFailAtPointForTesting
std::atomic<int64_t> g_fail_at{0};       // 0 = off
std::atomic<int64_t> g_process_passed{0};  // points passed by this process, for the kill hook
std::atomic<bool> g_recording{false};        // set by the first SetFailAtPointForTesting
std::mutex g_names_mu;
std::vector<std::string> g_names;            // points passed since then, while recording

int64_t KillAtFromEnvironment() {
  const char* v = std::getenv("FORESIGHT_TEST_KILL_AT_POINT");
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  return (*end == '\0' && n > 0) ? n : 0;
}

}  // namespace

Status TestPoint(const char* name) {
  static const int64_t kill_at = KillAtFromEnvironment();
  const int64_t passed = g_passed.fetch_add(1, std::memory_order_relaxed) + 1;
  if (kill_at > 0) {
    const int64_t n = g_process_passed.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n == kill_at) {
      // Plain write(2): nothing buffered may be lost or reordered by the kill.
      const std::string msg = "test point " + std::to_string(n) + " (" + name + "): SIGKILL\n";
      [[maybe_unused]] const ssize_t w = ::write(STDERR_FILENO, msg.data(), msg.size());
      std::raise(SIGKILL);
    }
  }
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
