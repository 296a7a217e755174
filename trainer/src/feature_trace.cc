#include "foresight/trainer/feature_trace.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "foresight/core/context.h"
#include "foresight/core/thread_pool.h"
#include "foresight/sampler/neighbor_sampler.h"
#include "foresight/sampler/partition_order.h"
#include "foresight/sampler/resident_mask.h"
#include "foresight/sampler/seed_order.h"
#include "node_data.h"
#include "pipeline/pipeline_setup.h"
#include "seed_orders.h"

namespace foresight::trainer {

int64_t HotSlots(const TrainOptions& options, int64_t cache_slots) {
  return static_cast<int64_t>(std::floor(static_cast<double>(options.EffectiveHotFraction()) * cache_slots));
}

StatusOr<FeatureTrace> SampleFeatureTrace(const TrainOptions& options, int epoch) {
  FS_RETURN_IF_ERROR(options.Validate());
  if (options.full_graph) return InvalidArgument("full-graph training reads every row once an epoch: no trace");
  if (epoch < 0) return InvalidArgument("epoch must be >= 0, got " + std::to_string(epoch));
  ThreadPool pool(options.threads);
  const ExecContext ctx = CpuContext(options.seed, &pool);
  internal::NodeData data;
  FS_RETURN_IF_ERROR(internal::OpenNodeData(options.dataset, &data));
  const storage::Dataset& d = *data.dataset;

  // The seed order, built as the mini-batch runner builds it (split
  // between rank_partitions ranks: the global batches of such a run).
  if (options.order == "partition" && options.resident_partitions == 0) {
    return InvalidArgument(
        "--order partition needs --resident-partitions N here: training sizes the automatic group from the "
        "cache, which the curve varies");
  }
  FS_ASSIGN_OR_RETURN(internal::SeedOrders orders,
                      internal::MakeSeedOrders(d, options, options.resident_partitions,
                                               std::max(1, options.rank_partitions)));
  const sampler::BatchOrder* order = orders.order.get();
  const sampler::PartitionOrder* partition_order = orders.partition;

  // The sample stage's loop (pipeline/sample_stage.cc) for one epoch.
  FeatureTrace trace;
  trace.num_nodes = d.num_nodes();
  trace.row_bytes = d.feature_dim() * static_cast<int64_t>(DTypeSize(d.manifest().feature_dtype));
  sampler::NeighborSampler sampler(data.graph, options.fanouts, options.seed);
  sampler::ResidentMask resident;
  const bool resident_sampling = options.sampling == "resident";
  for (int64_t b = 0; b < order->num_batches(); ++b) {
    const Tensor seeds = order->Batch(epoch, b);
    sampler::SampledBatch batch;
    if (resident_sampling) {
      FS_RETURN_IF_ERROR(resident.Set(partition_order->offsets(), partition_order->ResidentPartitions(epoch, b)));
      FS_RETURN_IF_ERROR(sampler.Sample(ctx, seeds, epoch, b, &batch, &resident.mask()));
    } else {
      FS_RETURN_IF_ERROR(sampler.Sample(ctx, seeds, epoch, b, &batch));
    }
    const int64_t* in = batch.input_nodes.data<int64_t>();
    trace.batches.emplace_back(in, in + batch.input_nodes.numel());
  }
  trace.keys_by_in_degree = internal::KeysByInDegree(d.indptr(), d.num_nodes());
  return trace;
}

}  // namespace foresight::trainer
