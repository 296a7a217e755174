// The feature-row trace of one training epoch: the rows each mini-batch
// reads, in the order the pipeline submits them to the cache planner,
// sampled exactly as `foresight train` samples them (same order, fanouts,
// seed and sampling scope). `foresight cache-curve` replays it through each
// cache policy at many cache sizes (cache/trace_replay.h).
#pragma once

#include <cstdint>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer {

// Batches the mini-batch pipeline keeps planned and unreleased (their cache
// slots pinned) while it plans the next one.
inline constexpr int kPipelineBatchesInFlight = 4;

struct FeatureTrace {
  // batches[b]: the distinct rows batch b reads (its sampled input nodes).
  std::vector<std::vector<int64_t>> batches;
  int64_t num_nodes = 0;
  int64_t row_bytes = 0;  // bytes of one feature row
  // Every node, highest in-degree first, ties by smaller id: the static
  // policy's fill order (training fills the first cache-size rows of it).
  std::vector<int64_t> keys_by_in_degree;
};

// The lookahead cache's static tier in a cache of `cache_slots` slots, as
// training sizes it: floor(options.EffectiveHotFraction() * cache_slots).
int64_t HotSlots(const TrainOptions& options, int64_t cache_slots);

// Samples epoch `epoch` (from 0) of the mini-batch training `options`
// describes (Validate()d here; full_graph is refused, having no trace).
// order = partition needs an explicit resident_partitions: training sizes
// the automatic group from the cache, which a curve over cache sizes
// varies. Errors name the option or the dataset file.
StatusOr<FeatureTrace> SampleFeatureTrace(const TrainOptions& options, int epoch);

}  // namespace foresight::trainer
