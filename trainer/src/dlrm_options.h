// The checks of TrainOptions for model = "dlrm" (TrainOptions::Validate
// calls it). Private to the trainer.
#pragma once

#include "foresight/core/status.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer::internal {

// Ranges of the DLRM fields and the shared ones DLRM uses; InvalidArgument
// for GNN-only options given non-default values (a flag that would be
// ignored). The message names the option.
Status ValidateDlrmOptions(const TrainOptions& o);

}  // namespace foresight::trainer::internal
