// Whether TrainOptions::device can be trained on here. A CUDA device that
// this build or machine cannot provide, or that training cannot use yet,
// is refused with the reason: training never moves to the CPU on its own.
#pragma once

#include <string>

#include "foresight/core/status.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer {

// The decision for `device` ("cpu", "cuda", "cuda:N") given whether CUDA is
// compiled in and how many GPUs are visible (pure: tested without a GPU).
// Messages start with "device:" (the flag's field name); `why_no_gpu`, when
// given, says why `gpus` is 0 (CudaAvailable()'s message).
Status DecideTrainDevice(const std::string& device, bool cuda_compiled, int gpus,
                         const std::string& why_no_gpu = "");

// DecideTrainDevice for options.device on this build and machine. A "cpu"
// device never touches CUDA (no driver is loaded).
Status CheckTrainDevice(const TrainOptions& options);

}  // namespace foresight::trainer
