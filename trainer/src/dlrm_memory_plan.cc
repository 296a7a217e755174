#include "dlrm_memory_plan.h"

#include <algorithm>
#include <string>


namespace foresight::trainer::internal {

int64_t DlrmWindowKeys(const TrainOptions& o, const storage::ClicksDataset& d) {
  int64_t ids_per_sample = 0;
  for (int64_t k = 0; k < d.num_fields(); ++k) ids_per_sample += d.field(k).bag_size;
  return (static_cast<int64_t>(o.EffectiveLookahead()) + 3) * std::max(o.batch_size, o.eval_batch_size) * ids_per_sample;
}

MemoryEstimate EstimateDlrmMemory(const DlrmMemoryInputs& in) {
  const TrainOptions& o = *in.options;
  const storage::ClicksDataset& d = *in.data;
  MemoryEstimate e;
  auto add = [&](const char* name, int64_t bytes) { e.items.push_back({name, bytes}); };
  add("baseline", in.baseline_bytes);
  // Mapped arrays: every page is read each epoch, so all of it is resident.
  int64_t dataset = d.dense().nbytes() + d.labels().nbytes();
  int64_t ids_per_sample = 0;
  for (int64_t k = 0; k < d.num_fields(); ++k) {
    dataset += d.ids(k).nbytes() + (d.vocab(k).defined() ? d.vocab(k).nbytes() : 0);
    ids_per_sample += d.field(k).bag_size;
  }
  add("dataset", dataset);
  // Values, gradients and up to two optimizer moments.
  add("dense model", 4 * 4 * in.parameters);
  AddTableStoreItems(o, in.table_rows, in.row_bytes, DlrmWindowKeys(o, d), &e);
  const int64_t batch = std::max(o.batch_size, o.eval_batch_size);
  // The window's batches and the one read ahead of it: ids (i64), their
  // keys and inverse in the table's queue, offsets, dense features and
  // targets.
  const int64_t per_batch = batch * (ids_per_sample * 8 * 3 + d.num_fields() * 8 + d.num_dense() * 4 + 4);
  add("lookahead batches", (static_cast<int64_t>(o.EffectiveLookahead()) + 2) * per_batch);
  // A batch's rows read around the cache, at most one per id (disk and
  // rocksdb read the next batch ahead: two regions).
  const int64_t regions = o.table_store == "disk" || o.table_store == "rocksdb" ? 2 : 1;
  if (o.table_store != "memory" || o.cache_size != 0) {
    add("bypass rows", regions * batch * ids_per_sample * in.row_bytes);
  }
  // A training step's activations and their gradients, or an evaluation
  // batch's activations, twice over (the host block cache keeps a step's
  // freed blocks for the next).
  add("step tensors", 2 * 4 * in.activation_width * std::max(2 * o.batch_size, o.eval_batch_size));
  return e;
}

StatusOr<int64_t> PlanDlrmCacheBytes(const TrainOptions& options, const MemoryEstimate& estimate, int64_t row_bytes) {
  return PlanTableCacheBytes(options, estimate, row_bytes,
                             "lower --batch-size or --lookahead" +
                                 (options.table_store == "disk" || options.table_store == "rocksdb"
                                      ? std::string()
                                      : std::string(", or use --table-store disk")));
}

}  // namespace foresight::trainer::internal
