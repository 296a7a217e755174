// Flags shared by `foresight eval` and `foresight export`.
#pragma once

#include <CLI/CLI.hpp>

#include "foresight/trainer/inference.h"

namespace foresight::apps {

// Binds DATASET, --checkpoint, --last, --threads and --eval-batch-size to
// `options` (which must outlive the parse) and `last` (true = use the last
// epoch instead of the best; apply with ApplyInferenceFlags).
void AddInferenceFlags(CLI::App* app, trainer::InferenceOptions* options, bool* last);

}  // namespace foresight::apps
