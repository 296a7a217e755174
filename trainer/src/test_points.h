// Test-only fault points in the trainer's crash-sensitive steps (checkpoint
// writes, the metrics file, the final line). In production both hooks are
// off and a point costs a few relaxed atomic operations. Private to the
// trainer.
//
// Two ways to arm them, both counting the points a process passes, in order,
// from 1:
// - FORESIGHT_TEST_KILL_AT in the environment: every point is also a
//   foresight::TestKillPoint (foresight/core/test_kill_point.h), so "N",
//   "NAME" or "NAME:N" SIGKILLs the process there. The kill-and-resume test
//   (tests/trainer/kill_resume_test.cc) uses it to land kills inside
//   checkpoint writes reliably; nothing else may set it.
// - SetFailAtPointForTesting(N) in-process: the N-th point returns a
//   ResourceExhausted "No space left on device" Status as a full disk would,
//   so the caller's error path (clean-up of what the write created) runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::trainer::internal {

// Marks a point named `name` (a literal: "checkpoint.tensor-written").
// Returns OK unless the in-process hook fails this point.
[[nodiscard]] Status TestPoint(const char* name);

// Arms (n >= 1) or disarms (n <= 0) the in-process failure at the n-th point
// counted from this call. Returns the names of the points passed since the
// previous call, in order (recorded only once a test has called this), so a
// test can list the points of a run and pick the ones to fail.
std::vector<std::string> SetFailAtPointForTesting(int64_t n);

}  // namespace foresight::trainer::internal
