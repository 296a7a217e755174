// Runs Preprocess on fuzzed input files and checks its promises: a success
// opens as a valid dataset; a failure is a clear error (never Internal) and
// leaves nothing at the output path.
#pragma once

#include "foresight/datasets/preprocess.h"

namespace foresight::fuzz {

// Options with output, temp dir and a small edge-sort budget in ScratchDir().
datasets::PreprocessOptions ScratchPreprocessOptions(datasets::InputFormat format);
// Runs `options` (single-threaded pool, warnings not logged) and checks the
// above; removes the output afterwards.
void RunPreprocessAndCheck(const datasets::PreprocessOptions& options);

}  // namespace foresight::fuzz
