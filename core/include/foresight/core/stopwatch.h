// Stopwatch: wall-clock seconds on the steady clock, for phase and stage
// timings (never for anything a result depends on).
#pragma once

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

}  // namespace foresight
