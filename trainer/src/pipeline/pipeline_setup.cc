#include "pipeline_setup.h"

#include <algorithm>
#include <string>

namespace foresight::trainer::internal {

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
  TrainingFeatures out;
  FS_ASSIGN_OR_RETURN(out.store, OpenFeatureStore(options, dataset));
  out.host_rows = out.store->host_rows();
  return out;
}

std::vector<int64_t> KeysByInDegree(const Tensor& indptr, int64_t count) {
  return KeysByInDegree(indptr, count, {{0, indptr.numel() - 1}});
}

std::vector<int64_t> KeysByInDegree(const Tensor& indptr, int64_t count,
                                    const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  int64_t n = 0;
  for (const auto& [begin, end] : ranges) n += end - begin;
  count = std::max<int64_t>(0, std::min(count, n));
  if (count == 0) return {};
  const int64_t* p = indptr.data<int64_t>();
  auto degree = [p](int64_t v) { return p[v + 1] - p[v]; };
  auto for_each_id = [&ranges](auto&& f) {
    for (const auto& [begin, end] : ranges) {
      for (int64_t v = begin; v < end; ++v) f(v);
    }
  };
  // Only `count` ids are ever held (a list of every node would cost 8 bytes
  // a node beside the cache): the cut degree t is the largest with at least
  // `count` nodes of degree >= t, found by bisection over the degrees.
  int64_t lo = 0, hi = 0;
  for_each_id([&](int64_t v) { hi = std::max(hi, degree(v)); });
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    int64_t at_least = 0;
    for_each_id([&](int64_t v) { at_least += degree(v) >= mid; });
    if (at_least >= count) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  std::vector<int64_t> ids;
  ids.reserve(static_cast<size_t>(count));
  for_each_id([&](int64_t v) {
    if (degree(v) > lo) ids.push_back(v);
  });
  for_each_id([&](int64_t v) {
    if (degree(v) == lo && static_cast<int64_t>(ids.size()) < count) ids.push_back(v);  // ties at the cut: smaller ids
  });
  std::sort(ids.begin(), ids.end(), [&degree](int64_t a, int64_t b) {
    const int64_t da = degree(a), db = degree(b);
    return da != db ? da > db : a < b;
  });
  return ids;
}

int AutoGroupSize(const std::vector<int64_t>& offsets, int64_t row_bytes, int64_t cache_bytes) {
  int64_t largest = 1;
  for (size_t p = 0; p + 1 < offsets.size(); ++p) largest = std::max(largest, offsets[p + 1] - offsets[p]);
  const int64_t fit = row_bytes > 0 ? cache_bytes / (largest * row_bytes) : 0;
  const int64_t parts = static_cast<int64_t>(offsets.size()) - 1;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(fit, parts)));
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
