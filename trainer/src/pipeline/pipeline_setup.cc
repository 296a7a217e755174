#include "pipeline_setup.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "foresight/storage/npy.h"

namespace foresight::trainer::internal {

namespace {

// A read-only RowStore over rows held in this process (a storage memory
// store over them), reporting the backend they came from ("memory" or
// "mmap") so logs and messages name what the user chose.
class HostRowsStore final : public storage::RowStore {
 public:
  HostRowsStore(std::unique_ptr<storage::RowStore> inner, std::string backend)
      : RowStore(inner->dtype(), inner->row_width()), inner_(std::move(inner)), backend_(std::move(backend)) {}
  int64_t num_rows() const override { return inner_->num_rows(); }
  bool writable() const override { return false; }
  std::string backend() const override { return backend_; }
  StatusOr<storage::IoTicket> SubmitRead(const std::vector<storage::RowRequest>& reqs, uint8_t* absent) override {
    return inner_->SubmitRead(reqs, absent);
  }
  StatusOr<storage::IoTicket> SubmitWrite(const std::vector<storage::RowRequest>&) override {
    return FailedPrecondition("the " + backend_ + " feature store is read-only");
  }
  Status Wait(storage::IoTicket ticket) override { return inner_->Wait(ticket); }
  Status Flush() override { return inner_->Flush(); }
  storage::RowStoreStats stats() const override { return inner_->stats(); }
  void ResetStats() override { inner_->ResetStats(); }

 private:
  std::unique_ptr<storage::RowStore> inner_;
  std::string backend_;
};

}  // namespace

StatusOr<std::unique_ptr<storage::RowStore>> OpenFeatureStore(const TrainOptions& options,
                                                              const storage::Dataset& dataset, bool buffered) {
  const auto& arrays = dataset.manifest().arrays;
  const auto it = arrays.find("features");
  if (it == arrays.end()) return FailedPrecondition(dataset.dir() + ": the manifest lists no features array");
  storage::RowStoreOptions so;
  FS_ASSIGN_OR_RETURN(so.kind, storage::ParseRowStoreKind(options.feature_store));
  so.path = dataset.dir() + "/" + it->second.file;
  so.writable = false;
  so.io_depth = options.io_depth;
  so.direct_io = !buffered;
  auto store = storage::OpenRowStore(so);
  if (!store.ok()) return store.status().WithContext("feature_store " + options.feature_store);
  if ((*store)->num_rows() != dataset.num_nodes() || (*store)->row_width() != dataset.feature_dim()) {
    return DataLoss(so.path + ": " + std::to_string((*store)->num_rows()) + " rows of " +
                    std::to_string((*store)->row_width()) + " features, but the manifest says " +
                    std::to_string(dataset.num_nodes()) + " nodes of " + std::to_string(dataset.feature_dim()));
  }
  return std::move(*store);
}

StatusOr<TrainingFeatures> OpenTrainingFeatures(const TrainOptions& options, const storage::Dataset& dataset) {
  FS_ASSIGN_OR_RETURN(const storage::RowStoreKind kind, storage::ParseRowStoreKind(options.feature_store));
  TrainingFeatures out;
  if (kind != storage::RowStoreKind::kMemory && kind != storage::RowStoreKind::kMmap) {
    FS_ASSIGN_OR_RETURN(out.store, OpenFeatureStore(options, dataset));
    return out;
  }
  const auto& arrays = dataset.manifest().arrays;
  const auto it = arrays.find("features");
  if (it == arrays.end()) return FailedPrecondition(dataset.dir() + ": the manifest lists no features array");
  const std::string path = dataset.dir() + "/" + it->second.file;
  const std::string context = "feature_store " + options.feature_store;
  StatusOr<Tensor> rows = kind == storage::RowStoreKind::kMemory ? storage::LoadNpy(path) : storage::MmapNpy(path);
  if (!rows.ok()) return rows.status().WithContext(context);
  if (rows->dim() != 2 || rows->size(0) != dataset.num_nodes() || rows->size(1) != dataset.feature_dim()) {
    return DataLoss(path + ": shape " + ShapeToString(rows->shape()) + ", but the manifest says " +
                    std::to_string(dataset.num_nodes()) + " nodes of " + std::to_string(dataset.feature_dim()) +
                    " features");
  }
  auto store = storage::MemoryRowStore(*rows, /*writable=*/false);
  if (!store.ok()) return store.status().WithContext(context + ": " + path);
  out.store = std::make_unique<HostRowsStore>(std::move(*store), storage::RowStoreKindName(kind));
  out.host_rows = std::move(*rows);
  return out;
}

std::vector<int64_t> KeysByInDegree(const Tensor& indptr, int64_t count) {
  const int64_t n = indptr.numel() - 1;
  count = std::max<int64_t>(0, std::min(count, n));
  const int64_t* p = indptr.data<int64_t>();
  std::vector<int64_t> ids(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::iota(ids.begin(), ids.end(), int64_t{0});
  auto by_degree = [p](int64_t a, int64_t b) {
    const int64_t da = p[a + 1] - p[a], db = p[b + 1] - p[b];
    return da != db ? da > db : a < b;
  };
  std::partial_sort(ids.begin(), ids.begin() + count, ids.end(), by_degree);
  ids.resize(static_cast<size_t>(count));
  return ids;
}

StatusOr<std::vector<int64_t>> PartitionOffsets(const storage::Dataset& dataset) {
  const std::vector<int64_t>& offsets = dataset.partition_offsets();
  if (offsets.size() < 2) {
    return FailedPrecondition("order: partition needs a partitioned dataset, and " + dataset.dir() +
                              " has no partitions; run `foresight partition " + dataset.dir() +
                              " --parts P` first");
  }
  return offsets;
}

}  // namespace foresight::trainer::internal
