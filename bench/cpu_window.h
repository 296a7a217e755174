// CPU seconds of one run of fn for benchmarks whose work runs on a thread
// pool: the process's CPU time over back-to-back runs lasting at least
// `window_s` (and at least `min_runs` runs), divided by the runs.
//
// Why not the best of single runs: Linux adds a running thread's CPU time
// to the process clock (CLOCK_PROCESS_CPUTIME_ID, getrusage) only at a tick
// or a context switch, so a pool worker that spins between runs is missed
// for up to a tick (4 ms here), and the smallest of short runs picks
// exactly those misses. Session 15's dlrm_gemm_floor reported 47.6 CPU ms
// for products perf counted at about 62; over a window the miss is at most
// one tick in `window_s`.
#pragma once

#include "foresight/core/stopwatch.h"

namespace foresight::bench {

template <typename Fn>
double MeanCpuSecondsOverWindow(Fn fn, int min_runs, double window_s = 0.25) {
  int runs = 0;
  const double c0 = ProcessCpuSeconds();
  Stopwatch window;
  do {
    fn();
    ++runs;
  } while (runs < min_runs || window.Seconds() < window_s);
  return (ProcessCpuSeconds() - c0) / runs;
}

}  // namespace foresight::bench
