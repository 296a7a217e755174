#include "pipeline_config_util.h"

#include <gtest/gtest.h>

#include <cstring>

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

Delivered RunPipeline(const trainer::internal::PipelineConfig& config, trainer::internal::RowPath expected_path,
                      const std::function<void(int64_t seq)>& after_next) {
  namespace internal = trainer::internal;
  Delivered out;
  auto started = internal::FeaturePipeline::Start(config);
  EXPECT_TRUE(started.ok()) << started.status().ToString();
  if (!started.ok()) return out;
  std::unique_ptr<internal::FeaturePipeline> p = std::move(*started);
  EXPECT_EQ(p->row_path().path, expected_path) << p->row_path().reason;
  for (int64_t seq = 0; seq < config.end_seq; ++seq) {
    internal::BatchPtr b;
    double waited = 0;
    const Status next = p->Next(&b, &waited);
    EXPECT_TRUE(next.ok()) << next.ToString();
    if (!next.ok()) return out;
    EXPECT_EQ(b->seq, seq);
    if (after_next) after_next(seq);
    out.inputs.push_back(b->sampled.input_nodes);
    out.x.push_back(std::move(b->x));
    out.x_dropout_keys.push_back(b->x_dropout_key);
    out.labels.push_back(b->labels);
    out.io.push_back(b->io);
    EXPECT_TRUE(p->Done(std::move(b), &waited).ok());
  }
  EXPECT_TRUE(p->Finish().ok());
  for (int64_t e = 0; e * config.batches_per_epoch < config.end_seq; ++e) out.epochs.push_back(p->TakeEpoch(e));
  return out;
}

void ExpectSameIo(const trainer::internal::BatchIo& a, const trainer::internal::BatchIo& b, const std::string& what) {
  EXPECT_EQ(a.rows_requested, b.rows_requested) << what;
  EXPECT_EQ(a.hits, b.hits) << what;
  EXPECT_EQ(a.misses, b.misses) << what;
  EXPECT_EQ(a.bytes_read, b.bytes_read) << what;
  EXPECT_EQ(a.bytes_written, b.bytes_written) << what;
}

Status DrainUntilError(trainer::internal::FeaturePipeline* p, int* delivered) {
  *delivered = 0;
  for (;;) {
    trainer::internal::BatchPtr b;
    double waited = 0;
    FS_RETURN_IF_ERROR(p->Next(&b, &waited));
    ++*delivered;
    // A failure may also reach the compute stage here, handing a batch on.
    FS_RETURN_IF_ERROR(p->Done(std::move(b), &waited));
  }
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

}  // namespace foresight::testing
