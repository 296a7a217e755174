#include "foresight/core/test_kill_point.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace foresight {

namespace {

// The armed point: `name` ("" = any) at its `count`-th pass; count 0 = off.
struct KillAt {
  std::string name;
  int64_t count = 0;
};

KillAt KillAtFromEnvironment() {
  KillAt k;
  const char* v = std::getenv("FORESIGHT_TEST_KILL_AT");
  if (v == nullptr || *v == '\0') return k;
  const std::string spec = v;
  std::string number = spec;
  if (spec.find_first_not_of("0123456789") != std::string::npos) {
    const size_t colon = spec.find(':');
    k.name = spec.substr(0, colon);
    number = colon == std::string::npos ? "1" : spec.substr(colon + 1);
  }
  char* end = nullptr;
  const long long n = std::strtoll(number.c_str(), &end, 10);
  k.count = (!number.empty() && *end == '\0' && n > 0) ? n : 0;
  return k;
}

std::atomic<int64_t> g_passed{0};  // passes of the armed point (of any point when it names none)

}  // namespace

void TestKillPoint(const char* name) {
  static const KillAt kill_at = KillAtFromEnvironment();
  if (kill_at.count == 0 || (!kill_at.name.empty() && kill_at.name != name)) return;
  const int64_t n = g_passed.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n != kill_at.count) return;
  // Plain write(2): nothing buffered may be lost or reordered by the kill.
  const std::string msg = "test point " + std::to_string(n) + " (" + name + "): SIGKILL\n";
  [[maybe_unused]] const ssize_t w = ::write(STDERR_FILENO, msg.data(), msg.size());
  std::raise(SIGKILL);
}

}  // namespace foresight
