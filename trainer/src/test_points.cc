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
std::atomic<int64_t> g_process_passed{0};  // points the kill hook counted in this process
std::atomic<bool> g_recording{false};        // set by the first SetFailAtPointForTesting
std::mutex g_names_mu;
std::vector<std::string> g_names;            // points passed since then, while recording

// FORESIGHT_TEST_KILL_AT_POINT: "N" (the N-th point of any name), "NAME"
// or "NAME:N" (the N-th pass of the point NAME). count 0 = off.
struct KillAt {
  std::string name;  // "" = any
  int64_t count = 0;
};

KillAt KillAtFromEnvironment() {
  KillAt k;
  const char* v = std::getenv("FORESIGHT_TEST_KILL_AT_POINT");
  if (v == nullptr || *v == '\0') return k;
  std::string spec = v;
  std::string number = spec;
  const bool numeric = spec.find_first_not_of("0123456789") == std::string::npos;
  if (!numeric) {
    const size_t colon = spec.find(':');
    k.name = spec.substr(0, colon);
    number = colon == std::string::npos ? "1" : spec.substr(colon + 1);
  }
  char* end = nullptr;
  const long long n = std::strtoll(number.c_str(), &end, 10);
  k.count = (!number.empty() && *end == '\0' && n > 0) ? n : 0;
  return k;
}

}  // namespace

Status TestPoint(const char* name) {
  static const KillAt kill_at = KillAtFromEnvironment();
  const int64_t passed = g_passed.fetch_add(1, std::memory_order_relaxed) + 1;
  if (kill_at.count > 0 && (kill_at.name.empty() || kill_at.name == name)) {
    const int64_t n = g_process_passed.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n == kill_at.count) {
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
