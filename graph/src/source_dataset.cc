#include "source_dataset.h"

#include <algorithm>
#include <climits>
#include <set>

namespace foresight::graph::internal {
namespace {

std::string DTypeString(const storage::NpyInfo& info) {
  if (info.is_bytes) return "S" + std::to_string(info.item_size);
  return DTypeName(info.dtype);
}

class ArrayOpener {
 public:
  ArrayOpener(const std::string& dir, const storage::DatasetManifest& m) : dir_(dir), m_(m) {}

  // Opens array `name` and checks it against the manifest and the expected
  // dtypes and shape.
  Status Open(const std::string& name, std::initializer_list<DType> dtypes, const Shape& shape,
              const std::string& why, SourceArray* out) {
    auto it = m_.arrays.find(name);
    if (it == m_.arrays.end()) {
      return DataLoss(dir_ + "/" + storage::kManifestFile + ": \"arrays\" has no entry \"" + name + "\" (required)");
    }
    const std::string path = dir_ + "/" + it->second.file;
    FS_ASSIGN_OR_RETURN(*out, SourceArray::Open(path));
    const storage::NpyInfo& info = out->info();
    if (DTypeString(info) != it->second.dtype || info.shape != it->second.shape) {
      return DataLoss(path + ": array is " + DTypeString(info) + " " + ShapeToString(info.shape) + " but " +
                      dir_ + "/" + storage::kManifestFile + " says " + it->second.dtype + " " +
                      ShapeToString(it->second.shape));
    }
    if (dtypes.size() > 0) {
      bool ok = false;
      std::string names;
      for (DType d : dtypes) {
        ok |= !info.is_bytes && info.dtype == d;
        names += std::string(names.empty() ? "" : " or ") + DTypeName(d);
      }
      if (!ok) return DataLoss(path + ": dtype must be " + names + ", got " + DTypeString(info));
    }
    if (!shape.empty() && info.shape != shape) {
      return DataLoss(path + ": expected shape " + ShapeToString(shape) + " (" + why + "), got " +
                      ShapeToString(info.shape));
    }
    return Status::OK();
  }

 private:
  std::string dir_;
  const storage::DatasetManifest& m_;
};

}  // namespace

StatusOr<SourceDataset> OpenSourceDataset(const std::string& dir) {
  SourceDataset s;
  s.dir = dir;
  FS_RETURN_IF_ERROR(storage::CheckNotStagingDir(dir));
  const std::string manifest_path = dir + "/" + storage::kManifestFile;
  FS_ASSIGN_OR_RETURN(s.manifest, storage::ReadManifest(manifest_path));
  const storage::DatasetManifest& m = s.manifest;
  const int64_t n = m.num_nodes, e = m.num_edges;
  s.num_nodes = n;
  s.num_edges = e;
  if (m.feature_layout == storage::FeatureLayout::kSparse) {
    return Unimplemented(manifest_path + ": partition does not renumber sparse features (feature_layout "
                         "\"sparse\") yet; train this dataset unpartitioned (--order random)");
  }
  static const std::set<std::string> kKnown = {"indptr",    "indices", "features", "labels",
                                               "train_ids", "val_ids", "test_ids", "original_ids"};
  for (const auto& [name, entry] : m.arrays) {
    if (kKnown.count(name) == 0) {
      return Unimplemented(manifest_path + ": array \"" + name +
                           "\" is not one partition knows how to renumber (node arrays: features, "
                           "labels, original_ids; graph: indptr, indices; splits)");
    }
  }
  ArrayOpener op(dir, m);
  const std::string nn = "num_nodes=" + std::to_string(n) + " in manifest.json";
  SourceArray indptr;
  FS_RETURN_IF_ERROR(op.Open("indptr", {DType::kI64}, {n + 1}, "num_nodes + 1, " + nn, &indptr));
  if (n > INT32_MAX) {
    FS_RETURN_IF_ERROR(op.Open("indices", {DType::kI64}, {e}, "num_edges=" + std::to_string(e), &s.indices));
  } else {
    FS_RETURN_IF_ERROR(op.Open("indices", {DType::kI32, DType::kI64}, {e},
                               "num_edges=" + std::to_string(e), &s.indices));
  }
  FS_RETURN_IF_ERROR(op.Open("features", {m.feature_dtype}, {n, m.feature_dim},
                             "[num_nodes, feature_dim] from manifest.json", &s.features));
  FS_RETURN_IF_ERROR(op.Open("labels", {DType::kI32, DType::kI64}, {n}, nn, &s.labels));
  SourceArray* splits[3] = {&s.train_ids, &s.val_ids, &s.test_ids};
  const char* split_names[3] = {"train_ids", "val_ids", "test_ids"};
  for (int k = 0; k < 3; ++k) {
    FS_RETURN_IF_ERROR(op.Open(split_names[k], {DType::kI64}, {}, "", splits[k]));
    if (splits[k]->info().shape.size() != 1) {
      return DataLoss(splits[k]->path() + ": expected a 1-D array of node ids, got shape " +
                      ShapeToString(splits[k]->info().shape));
    }
  }
  const bool has_orig = m.arrays.count("original_ids") > 0;
  if (m.id_map == storage::IdMap::kNone && has_orig) {
    return DataLoss(manifest_path + ": id_map is \"none\" but \"arrays\" lists original_ids");
  }
  if (m.id_map != storage::IdMap::kNone) {
    s.original_ids.emplace();
    if (m.id_map == storage::IdMap::kInt) {
      FS_RETURN_IF_ERROR(op.Open("original_ids", {DType::kI64}, {n}, nn, &*s.original_ids));
    } else {
      FS_RETURN_IF_ERROR(op.Open("original_ids", {}, {n}, nn, &*s.original_ids));
      if (!s.original_ids->info().is_bytes) {
        return DataLoss(s.original_ids->path() + ": id_map is \"string\" so the dtype must be S<width>, got " +
                        DTypeString(s.original_ids->info()));
      }
    }
  }

  // indptr is O(N): load it and check it once; every pass relies on it.
  s.indptr.resize(static_cast<size_t>(n + 1));
  FS_RETURN_IF_ERROR(indptr.ReadRows(0, n + 1, s.indptr.data()));
  const int64_t* p = s.indptr.data();
  if (p[0] != 0) return DataLoss(indptr.path() + ": indptr[0] must be 0, got " + std::to_string(p[0]));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = p[i + 1] - p[i];
    if (d < 0) {
      return DataLoss(indptr.path() + ": indptr must be non-decreasing, but indptr[" + std::to_string(i) +
                      "]=" + std::to_string(p[i]) + " > indptr[" + std::to_string(i + 1) +
                      "]=" + std::to_string(p[i + 1]));
    }
    s.max_degree = std::max(s.max_degree, d);
  }
  if (p[n] != e) {
    return DataLoss(indptr.path() + ": indptr[" + std::to_string(n) +
                    "] (the last entry) must equal num_edges=" + std::to_string(e) +
                    " from manifest.json, got " + std::to_string(p[n]));
  }
  return s;
}

int64_t ChunkEdgesFor(const SourceDataset& src, size_t bytes) {
  const int64_t isz = src.indices_i64() ? 8 : 4;
  return std::max<int64_t>(1, static_cast<int64_t>(bytes) / isz);
}

CsrChunkReader::CsrChunkReader(const SourceDataset& src, int64_t chunk_edges)
    : src_(src), chunk_edges_(std::max<int64_t>(chunk_edges, 1)) {
  // Sized once for the largest chunk: growing it chunk by chunk would hold
  // the old and the new buffer at once.
  const int64_t most = std::min(src.num_edges, std::max(chunk_edges_, src.max_degree));
  buf_.resize((static_cast<size_t>(most) * src.indices.row_bytes() + 7) / 8);
}

namespace {

// Position of the first id outside [0, n) in ids[0, count), or -1.
template <typename T>
int64_t FirstOutOfRange(const T* ids, int64_t count, int64_t n) {
  bool any = false;
  for (int64_t i = 0; i < count; ++i) any |= static_cast<uint64_t>(static_cast<int64_t>(ids[i])) >= static_cast<uint64_t>(n);
  if (!any) return -1;
  for (int64_t i = 0; i < count; ++i) {
    if (static_cast<uint64_t>(static_cast<int64_t>(ids[i])) >= static_cast<uint64_t>(n)) return i;
  }
  return -1;
}

}  // namespace

StatusOr<bool> CsrChunkReader::Next(int64_t* begin, int64_t* end) {
  const int64_t n = src_.num_nodes;
  if (row_ >= n) return false;
  const int64_t* p = src_.indptr.data();
  // Whole rows up to chunk_edges_ edges, at least one row.
  const int64_t limit = p[row_] + chunk_edges_;
  int64_t r = std::upper_bound(p + row_ + 1, p + n + 1, limit) - p - 1;
  if (r <= row_) r = row_ + 1;
  const int64_t first = p[row_], count = p[r] - first;
  const size_t isz = src_.indices.row_bytes();
  const size_t words = (static_cast<size_t>(count) * isz + 7) / 8;
  if (buf_.size() < words) buf_.resize(words);
  FS_RETURN_IF_ERROR(src_.indices.ReadRows(first, count, buf_.data()));
  const int64_t bad = src_.indices_i64() ? FirstOutOfRange(data<int64_t>(), count, n)
                                         : FirstOutOfRange(data<int32_t>(), count, n);
  if (bad >= 0) {
    const int64_t v = src_.indices_i64() ? data<int64_t>()[bad] : data<int32_t>()[bad];
    return DataLoss(src_.indices.path() + ": position " + std::to_string(first + bad) + ": value " +
                    std::to_string(v) + " is not a node id in [0, " + std::to_string(n) + ")");
  }
  *begin = row_;
  *end = r;
  row_ = r;
  return true;
}

}  // namespace foresight::graph::internal
