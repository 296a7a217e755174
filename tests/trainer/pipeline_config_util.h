// For tests that drive the private FeaturePipeline (trainer/src/pipeline)
// directly: the dataset and order it runs on, a config over them, and a
// compute stage that records what it was handed.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/thread_pool.h"
#include "foresight/sampler/seed_order.h"
#include "foresight/storage/dataset.h"
#include "pipeline/feature_pipeline.h"

namespace foresight::testing {

// The pipeline dataset at `dir` and a shuffled order of its training ids in
// batches of 32 (seed 1).
struct PipelineInputs {
  std::unique_ptr<storage::Dataset> dataset;
  std::unique_ptr<sampler::SeedOrder> order;
};
StatusOr<PipelineInputs> OpenPipelineInputs(const std::string& dir);

// `epochs` epochs of in.order over the whole graph, fanouts {5, 3}, seed 1,
// labels, on `pool`, reading `store` with no cache (the row path is then
// the caller's choice: host_rows, cache, force_cache_planner).
trainer::internal::PipelineConfig BasicPipelineConfig(const PipelineInputs& in, storage::RowStore* store,
                                                      ThreadPool* pool, int epochs);

// What compute received, batch by batch, and the epochs' counters.
struct Delivered {
  std::vector<Tensor> inputs, x, labels;
  std::vector<std::optional<RngKey>> x_dropout_keys;
  std::vector<trainer::internal::BatchIo> io;
  std::vector<trainer::internal::EpochAccount> epochs;
};

// Runs the pipeline to its end as the compute stage would, expecting the
// row path `expected_path`; calls after_next(seq), if given, between each
// batch's Next and Done (a compute step's time). Failures are test failures.
Delivered RunPipeline(const trainer::internal::PipelineConfig& config, trainer::internal::RowPath expected_path,
                      const std::function<void(int64_t seq)>& after_next = nullptr);

void ExpectSameIo(const trainer::internal::BatchIo& a, const trainer::internal::BatchIo& b, const std::string& what);

// Takes and hands back batches, as the compute stage does, until Next or
// Done fails (OutOfRange once every batch was delivered), and returns that
// Status; counts the batches delivered.
Status DrainUntilError(trainer::internal::FeaturePipeline* p, int* delivered);

// Same shape, dtype and bytes (both defined).
bool SameBytes(const Tensor& a, const Tensor& b);

}  // namespace foresight::testing
