// Test-only kill points, shared by every module: tests that must stop a real
// `foresight` child at an exact step (a checkpoint write, a dataset commit)
// arm them with one environment variable, read once per process:
//
//   FORESIGHT_TEST_KILL_AT=NAME     SIGKILL at the first pass of point NAME
//   FORESIGHT_TEST_KILL_AT=NAME:N   ... at its N-th pass
//   FORESIGHT_TEST_KILL_AT=N        ... at the N-th point passed, any name
//
// The process first writes "test point N (NAME): SIGKILL" to stderr (N: the
// passes counted), then raises SIGKILL, as `kill -9` would at that instant.
// Not a user feature: unset, a point costs one relaxed atomic increment.
#pragma once

namespace foresight {

// Marks a pass of the point `name` (a literal, e.g. "checkpoint.tensor-written"
// or "staging-created"). Thread-safe.
void TestKillPoint(const char* name);

}  // namespace foresight
