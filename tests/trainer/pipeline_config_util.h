// For tests that drive the private FeaturePipeline (trainer/src/pipeline)
// directly: the dataset and order it runs on, and a config over them.
#pragma once

#include <memory>
#include <string>

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

}  // namespace foresight::testing
