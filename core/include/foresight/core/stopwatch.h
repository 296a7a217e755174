// Stopwatch: wall-clock seconds on the steady clock, for phase and stage
// timings (never for anything a result depends on); ProcessCpuSeconds: the
// CPU time the whole process has used.
#pragma once

#include <time.h>

#include <chrono>

namespace foresight {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  // Seconds since construction or the last Lap, and restarts from now.
  double Lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - start_).count();
    start_ = now;
    return s;
  }
  // Seconds since construction or the last Lap, without restarting.
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// CPU seconds (user + system) of the whole process, every thread, so far:
// on a shared machine the work a phase took, where wall time also counts
// other processes' turns.
inline double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace foresight
