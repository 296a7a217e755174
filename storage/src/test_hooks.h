// Test-only hooks of the dataset commit, driven by environment variables so
// that tests can stop a real `foresight preprocess` or `foresight partition`
// child exactly where they need to. They are not user features; unset, each
// costs one getenv at a handful of points per dataset written.
//
//   FORESIGHT_TEST_KILL_AT=<point>      the process sends itself SIGKILL on
//                                       reaching TestKillPoint(<point>)
//                                       (foresight/core/test_kill_point.h),
//                                       as `kill -9` would at that instant
//   FORESIGHT_TEST_NO_RENAME_EXCHANGE=1 replacing a dataset takes the
//                                       two-rename path that file systems
//                                       without renameat2(RENAME_EXCHANGE) use
//
// The points, in the order a run reaches them (DatasetWriter):
//   staging-created   staging dir made, its marker not yet written
//   staging-locked    marker written and locked
//   manifest-written  manifest.json written inside staging
//   before-commit     staging complete and synced, nothing renamed yet
//   old-marked        (replacing) the old dataset marked as staging
//   old-moved         (replacing, two renames) old dataset moved aside,
//                     the output path momentarily absent
//   committed         new dataset at the output path, its marker not yet removed
//   replaced          (replacing) marker removed, old dataset not yet deleted
#pragma once

#include "foresight/core/test_kill_point.h"

namespace foresight::storage::internal {

// False when FORESIGHT_TEST_NO_RENAME_EXCHANGE is set to a non-empty value
// other than "0".
bool RenameExchangeAllowed();

}  // namespace foresight::storage::internal
