#include "pipeline_config_util.h"

#include "foresight/core/context.h"

namespace foresight::testing {

StatusOr<PipelineInputs> OpenPipelineInputs(const std::string& dir) {
  PipelineInputs in;
  FS_ASSIGN_OR_RETURN(in.dataset, storage::Dataset::Open(dir));
  in.order = std::make_unique<sampler::SeedOrder>(in.dataset->train_ids(), 32, 1);
  FS_RETURN_IF_ERROR(in.order->status());
  return in;
}

trainer::internal::PipelineConfig BasicPipelineConfig(const PipelineInputs& in, storage::RowStore* store,
                                                      ThreadPool* pool, int epochs) {
  const storage::Dataset& d = *in.dataset;
  trainer::internal::PipelineConfig c;
  c.ctx = CpuContext(1, pool);
  c.order = in.order.get();
  c.graph.indptr = d.indptr();
  c.graph.indices = d.indices();
  c.graph.num_src = d.num_nodes();
  c.fanouts = {5, 3};
  c.seed = 1;
  c.store = store;
  c.cache.row_bytes = store->row_bytes();
  c.cache.key_space = d.num_nodes();
  c.labels = d.labels();
  c.batches_per_epoch = in.order->num_batches();
  c.end_seq = epochs * in.order->num_batches();
  return c;
}

}  // namespace foresight::testing
