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
  so.max_read_gap_bytes = options.EffectiveReadGap();
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

namespace {

// The `count` ids in `ranges` of highest score(v), highest first, ties by
// smaller id. Only `count` ids are ever held (a list of every node would
// cost 8 bytes a node beside the cache): the cut score t is the largest
// with at least `count` ids of score >= t, found by bisection.
template <typename Score>
std::vector<int64_t> TopKeys(const std::vector<std::pair<int64_t, int64_t>>& ranges, int64_t count,
                             const Score& score) {
  int64_t n = 0;
  for (const auto& [begin, end] : ranges) n += end - begin;
  count = std::max<int64_t>(0, std::min(count, n));
  if (count == 0) return {};
  auto for_each_id = [&ranges](auto&& f) {
    for (const auto& [begin, end] : ranges) {
      for (int64_t v = begin; v < end; ++v) f(v);
    }
  };
  int64_t lo = 0, hi = 0;
  for_each_id([&](int64_t v) { hi = std::max(hi, score(v)); });
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    int64_t at_least = 0;
    for_each_id([&](int64_t v) { at_least += score(v) >= mid; });
    if (at_least >= count) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  std::vector<int64_t> ids;
  ids.reserve(static_cast<size_t>(count));
  for_each_id([&](int64_t v) {
    if (score(v) > lo) ids.push_back(v);
  });
  for_each_id([&](int64_t v) {
    if (score(v) == lo && static_cast<int64_t>(ids.size()) < count) ids.push_back(v);  // ties at the cut: smaller ids
  });
  std::sort(ids.begin(), ids.end(), [&score](int64_t a, int64_t b) {
    const int64_t sa = score(a), sb = score(b);
    return sa != sb ? sa > sb : a < b;
  });
  return ids;
}

}  // namespace

std::vector<int64_t> KeysByInDegree(const Tensor& indptr, int64_t count) {
  return KeysByInDegree(indptr, count, {{0, indptr.numel() - 1}});
}

std::vector<int64_t> KeysByInDegree(const Tensor& indptr, int64_t count,
                                    const std::vector<std::pair<int64_t, int64_t>>& ranges) {
  const int64_t* p = indptr.data<int64_t>();
  return TopKeys(ranges, count, [p](int64_t v) { return p[v + 1] - p[v]; });
}

StatusOr<std::vector<int64_t>> KeysByHaloDegree(const kernels::Csr& graph, const std::vector<int64_t>& offsets,
                                                int64_t count) {
  const int64_t n = graph.num_dst();
  if (offsets.size() < 2 || offsets.front() != 0 || offsets.back() != n) {
    return Internal("halo ranking: partition offsets do not cover the graph's " + std::to_string(n) + " nodes");
  }
  if (graph.indices.dtype() != DType::kI32 && graph.indices.dtype() != DType::kI64) {
    return Internal("halo ranking: indices must be i32 or i64");
  }
  const int64_t* ptr = graph.indptr.data<int64_t>();
  // Edges u -> v by destination v; u is a halo row for v's partition when
  // it lies in another. Counted in u32 (an in-neighbour list is < 2^32).
  std::vector<uint32_t> halo(static_cast<size_t>(n), 0);
  auto count_edges = [&](const auto* idx) {
    int part = 0;
    for (int64_t v = 0; v < n; ++v) {
      while (v >= offsets[part + 1]) ++part;
      const int64_t lo = offsets[part], hi = offsets[part + 1];
      for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e) {
        const int64_t u = idx[e];
        if (u < lo || u >= hi) ++halo[static_cast<size_t>(u)];
      }
    }
  };
  if (graph.indices.dtype() == DType::kI32) {
    count_edges(graph.indices.data<int32_t>());
  } else {
    count_edges(graph.indices.data<int64_t>());
  }
  return TopKeys({{0, n}}, count, [&halo](int64_t v) { return static_cast<int64_t>(halo[static_cast<size_t>(v)]); });
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
