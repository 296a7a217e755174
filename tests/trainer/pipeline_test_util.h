// Helpers shared by the pipeline tests: a small synthetic dataset with many
// batches per epoch, and comparisons of training histories.
#pragma once

#include <string>
#include <vector>

#include "foresight/trainer/trainer.h"

namespace foresight::testing {

// 2000 nodes, 16 f32 features (128 KiB of features), 3 classes: 1000
// training ids, i.e. 32 batches of PipelineOptions' batch size.
inline constexpr int64_t kPipelineNodes = 2000;
inline constexpr int64_t kPipelineFeatureDim = 16;
inline constexpr int64_t kPipelineFeatureBytes = kPipelineNodes * kPipelineFeatureDim * 4;
Status WritePipelineDataset(const std::string& dir);

// GraphSAGE, 3 epochs of 32 batches, 2 threads, no progress.
trainer::TrainOptions PipelineOptions(const std::string& dataset);

// Trains; the per-epoch history (empty and a test failure on error).
std::vector<trainer::EpochMetrics> TrainHistory(const trainer::TrainOptions& options);

// Expects the same loss and accuracies, bit for bit, epoch by epoch.
void ExpectSameResults(const std::vector<trainer::EpochMetrics>& expected,
                       const std::vector<trainer::EpochMetrics>& actual, const std::string& what);

}  // namespace foresight::testing
