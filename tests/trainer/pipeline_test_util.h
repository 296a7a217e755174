// Helpers shared by the pipeline tests: a small synthetic dataset with many
// batches per epoch, a fixture that writes it once per suite, the metrics
// file's epoch lines, and comparisons of training histories.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/trainer/trainer.h"
#include "testing/testing.h"

namespace foresight::testing {

// 2000 nodes, 16 f32 features (128 KiB of features), 3 classes: 1000
// training ids, i.e. 32 batches of PipelineOptions' batch size.
inline constexpr int64_t kPipelineNodes = 2000;
inline constexpr int64_t kPipelineFeatureDim = 16;
inline constexpr int64_t kPipelineRowBytes = kPipelineFeatureDim * 4;
inline constexpr int64_t kPipelineFeatureBytes = kPipelineNodes * kPipelineRowBytes;
Status WritePipelineDataset(const std::string& dir);

// GraphSAGE, 3 epochs of 32 batches, 2 threads, no progress.
trainer::TrainOptions PipelineOptions(const std::string& dataset);

// A fixture whose suite shares one temporary directory holding the pipeline
// dataset as "data", written once per suite (the tests only read it). A
// suite that needs more there extends SetUpTestSuite, calling this one
// first, and writes under dir().
class PipelineSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  static const TempDir& dir() { return *dir_; }
  static std::string DataDir() { return dir_->File("data"); }
  // PipelineOptions on DataDir().
  static trainer::TrainOptions Options() { return PipelineOptions(DataDir()); }

 private:
  static TempDir* dir_;
};

// A fixture that writes the pipeline dataset afresh for every test, for
// tests that damage it (truncate the features file).
class FreshPipelineDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_OK(WritePipelineDataset(DataDir())); }
  std::string DataDir() const { return dir_.File("data"); }
  std::string FeaturesFile() const { return DataDir() + "/features.npy"; }
  trainer::TrainOptions Options() const { return PipelineOptions(DataDir()); }

 private:
  TempDir dir_;
};

// Trains; the per-epoch history (empty and a test failure on error).
std::vector<trainer::EpochMetrics> TrainHistory(const trainer::TrainOptions& options);

// The metrics file's per-epoch lines (the final summary line left out).
std::vector<nlohmann::json> EpochLines(const std::string& metrics_file);

// Expects the same loss and accuracies, bit for bit, epoch by epoch.
void ExpectSameResults(const std::vector<trainer::EpochMetrics>& expected,
                       const std::vector<trainer::EpochMetrics>& actual, const std::string& what);

}  // namespace foresight::testing
