// Whether TrainOptions::device can be trained on here. A CUDA device that
// this build or machine cannot provide, or a run that cannot train on a GPU
// yet, is refused with the reason: training never moves to the CPU on its
// own.
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

// Whether the run `options` describes can train on its device (pure: tested
// without a GPU). OK for the CPU, and on a CUDA device for GNN node
// classification (sage, gcn, gat), full-graph or mini-batch with the
// features in memory (feature_store memory or mmap), with dense node
// features ("file" whose features are dense, or "degree"), without
// checkpoints; anything else is Unimplemented, naming what does not run on
// a GPU yet. (Sparse "file" features are refused when the dataset is
// opened, and several ranks when the job starts: only then are they known.)
Status CudaTrainingSupports(const TrainOptions& options);

// DecideTrainDevice for options.device on this build and machine, then
// CudaTrainingSupports. A "cpu" device never touches CUDA (no driver is
// loaded).
Status CheckTrainDevice(const TrainOptions& options);

}  // namespace foresight::trainer
