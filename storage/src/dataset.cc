// Dataset::Open: maps every array of a dataset dir and validates it against
// the manifest and against each other, in O(N + E) parallel passes.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <climits>
#include <limits>
#include <vector>

#include "file_util.h"
#include "foresight/core/thread_pool.h"
#include "foresight/storage/dataset.h"

namespace foresight::storage {
namespace {

constexpr int64_t kScanGrain = int64_t(1) << 18;

std::string ArrayDTypeString(const NpyInfo& info) {
  if (info.is_bytes) return "S" + std::to_string(info.item_size);
  return DTypeName(info.dtype);
}

// Drops the pages of [p, p + bytes) that the scan of a read-only file
// mapping has touched, so validating an E-sized array does not leave E
// bytes in the process's RSS (mapped file pages count there, and
// `--memory-budget` is the whole process's peak). The pages stay in the
// page cache; a later reader faults them back in cheaply. Only the
// page-aligned interior is dropped: its neighbours may belong to other
// chunks still being read.
void ReleaseScannedPages(const void* p, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// The first index in [0, n) for which bad(i) holds, or -1. Each chunk first
// tests with a branch-free OR (vectorisable), and only a chunk that contains
// a bad element is rescanned for its position; the smallest wins, so the
// answer does not depend on thread scheduling.
// With `mapped` (the scanned array, a read-only file mapping), each chunk's
// pages are released after its scan.
template <typename Bad, typename T = char>
int64_t FirstBad(int64_t n, const Bad& bad, const T* mapped = nullptr) {
  if (n <= 0) return -1;
  const int64_t chunks = ThreadPool::NumChunks(n, kScanGrain);
  std::vector<int64_t> first(static_cast<size_t>(chunks), -1);
  DefaultThreadPool()->ParallelForChunks(n, kScanGrain, [&](int64_t c, int64_t b, int64_t e) {
    bool any = false;
    for (int64_t i = b; i < e; ++i) any |= bad(i);
    if (mapped != nullptr) ReleaseScannedPages(mapped + b, static_cast<size_t>(e - b) * sizeof(T));
    if (!any) return;
    for (int64_t i = b; i < e; ++i) {
      if (bad(i)) { first[static_cast<size_t>(c)] = i; return; }
    }
  });
  for (int64_t f : first) {
    if (f >= 0) return f;
  }
  return -1;
}

// Values of an i32 or i64 tensor as int64.
template <typename T>
int64_t At(const Tensor& t, int64_t i) { return static_cast<int64_t>(t.data<T>()[i]); }
int64_t IntAt(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kI32 ? At<int32_t>(t, i) : At<int64_t>(t, i);
}

// First position of `t` (i32 or i64, a read-only file mapping) whose value
// is outside [lo, hi). Scanned pages are released (ReleaseScannedPages).
int64_t FirstOutside(const Tensor& t, int64_t lo, int64_t hi) {
  // (v - lo) as unsigned >= (hi - lo) is the whole range test in one compare.
  const uint64_t span = static_cast<uint64_t>(hi - lo);
  if (t.dtype() == DType::kI32) {
    const int32_t* p = t.data<int32_t>();
    return FirstBad(t.numel(), [&](int64_t i) {
      return static_cast<uint64_t>(static_cast<int64_t>(p[i]) - lo) >= span;
    }, p);
  }
  const int64_t* p = t.data<int64_t>();
  return FirstBad(t.numel(), [&](int64_t i) { return static_cast<uint64_t>(p[i] - lo) >= span; }, p);
}

class Opener {
 public:
  Opener(std::string dir, const DatasetManifest& m) : dir_(std::move(dir)), m_(m) {}

  // Maps the array `name`; an absent optional array yields an undefined Tensor.
  Status Map(const std::string& name, bool required, Tensor* out, NpyInfo* info) {
    auto it = m_.arrays.find(name);
    if (it == m_.arrays.end()) {
      if (!required) return Status::OK();
      return DataLoss(ManifestPath() + ": \"arrays\" has no entry \"" + name + "\" (required)");
    }
    const ArrayEntry& e = it->second;
    const std::string path = Path(e.file);
    auto t = MmapNpy(path, info);
    if (!t.ok()) {
      return t.status().WithContext("dataset " + dir_ + ": array \"" + name + "\"");
    }
    const std::string dtype = ArrayDTypeString(*info);
    if (dtype != e.dtype) {
      return DataLoss(path + ": dtype is " + dtype + " but " + ManifestPath() + " says " + e.dtype);
    }
    if (info->shape != e.shape) {
      return DataLoss(path + ": shape is " + ShapeToString(info->shape) + " but " + ManifestPath() +
                      " says " + ShapeToString(e.shape));
    }
    *out = std::move(t).value();
    return Status::OK();
  }

  Status ExpectShape(const std::string& file, const NpyInfo& info, const Shape& shape,
                     const std::string& why) {
    if (info.shape == shape) return Status::OK();
    return DataLoss(Path(file) + ": expected shape " + ShapeToString(shape) + " (" + why + "), got " +
                    ShapeToString(info.shape));
  }

  Status ExpectDType(const std::string& file, const NpyInfo& info, std::initializer_list<DType> ok) {
    std::string names;
    for (DType d : ok) {
      if (!info.is_bytes && info.dtype == d) return Status::OK();
      names += std::string(names.empty() ? "" : " or ") + DTypeName(d);
    }
    return DataLoss(Path(file) + ": dtype must be " + names + ", got " + ArrayDTypeString(info));
  }

  std::string Path(const std::string& file) const { return dir_ + "/" + file; }
  std::string ManifestPath() const { return Path(kManifestFile); }
  std::string FileOf(const std::string& name) const { return m_.arrays.at(name).file; }

 private:
  std::string dir_;
  const DatasetManifest& m_;
};

// The three CSR arrays of sparse features: dtypes, shapes, indptr from 0 to
// nnz and non-decreasing, column ids in [0, feature_dim), finite values.
Status OpenSparseFeatures(Opener& op, const DatasetManifest& m, Tensor* indptr, Tensor* indices, Tensor* values) {
  const int64_t n = m.num_nodes, f = m.feature_dim;
  if (m.arrays.count("features") > 0) {
    return DataLoss(op.ManifestPath() + ": feature_layout is \"sparse\" but \"arrays\" lists features");
  }
  NpyInfo info;
  FS_RETURN_IF_ERROR(op.Map("feature_indptr", true, &*indptr, &info));
  FS_RETURN_IF_ERROR(op.ExpectDType(op.FileOf("feature_indptr"), info, {DType::kI64}));
  FS_RETURN_IF_ERROR(op.ExpectShape(op.FileOf("feature_indptr"), info, {n + 1}, "num_nodes + 1"));
  const int64_t* p = indptr->data<int64_t>();
  const int64_t nnz = p[n];
  FS_RETURN_IF_ERROR(op.Map("feature_indices", true, &*indices, &info));
  FS_RETURN_IF_ERROR(op.ExpectDType(op.FileOf("feature_indices"), info, {DType::kI32}));
  FS_RETURN_IF_ERROR(op.ExpectShape(op.FileOf("feature_indices"), info, {nnz}, "feature_indptr's last entry"));
  FS_RETURN_IF_ERROR(op.Map("feature_values", true, &*values, &info));
  FS_RETURN_IF_ERROR(op.ExpectDType(op.FileOf("feature_values"), info, {DType::kF32}));
  FS_RETURN_IF_ERROR(op.ExpectShape(op.FileOf("feature_values"), info, {nnz}, "feature_indptr's last entry"));
  const std::string indptr_path = op.Path(op.FileOf("feature_indptr"));
  if (p[0] != 0) return DataLoss(indptr_path + ": feature_indptr[0] must be 0, got " + std::to_string(p[0]));
  const int64_t bad_row = FirstBad(n, [p](int64_t i) { return p[i] > p[i + 1]; });
  if (bad_row >= 0) {
    return DataLoss(indptr_path + ": must be non-decreasing, but row " + std::to_string(bad_row) + " starts at " +
                    std::to_string(p[bad_row]) + " and ends at " + std::to_string(p[bad_row + 1]));
  }
  const int64_t bad = FirstOutside(*indices, 0, f);
  if (bad >= 0) {
    return DataLoss(op.Path(op.FileOf("feature_indices")) + ": position " + std::to_string(bad) + ": feature id " +
                    std::to_string(IntAt(*indices, bad)) + " is not in [0, feature_dim=" +
                    std::to_string(f) + ")");
  }
  const float* v = values->data<float>();
  const int64_t bad_value = FirstBad(nnz, [v](int64_t i) { return !std::isfinite(v[i]); });
  if (bad_value >= 0) {
    return DataLoss(op.Path(op.FileOf("feature_values")) + ": position " + std::to_string(bad_value) +
                    " is not a finite number");
  }
  return Status::OK();
}

}  // namespace

StatusOr<std::unique_ptr<Dataset>> Dataset::Open(const std::string& dir_in, bool validate_ids) {
  FS_ASSIGN_OR_RETURN(const std::string dir, internal::ExistingDatasetDir(dir_in));
  FS_RETURN_IF_ERROR(CheckNotStagingDir(dir));
  return OpenDir(dir, validate_ids);
}

StatusOr<std::unique_ptr<Dataset>> Dataset::OpenDir(const std::string& dir_in, bool validate_ids) {
  FS_ASSIGN_OR_RETURN(const std::string dir, internal::ExistingDatasetDir(dir_in));
  std::unique_ptr<Dataset> ds(new Dataset());
  ds->dir_ = dir;
  FS_ASSIGN_OR_RETURN(ds->manifest_, ReadManifest(dir + "/" + kManifestFile));
  const DatasetManifest& m = ds->manifest_;
  if (m.kind != kKindGraph) {
    return InvalidArgument("dataset " + dir + " is a " + m.kind +
                           " dataset, not a graph (storage::ClicksDataset reads it)");
  }
  FS_ASSIGN_OR_RETURN(ds->partition_offsets_, ParsePartitionOffsets(m, dir + "/" + kManifestFile));
  Opener op(dir, m);
  const int64_t n = m.num_nodes, e = m.num_edges, f = m.feature_dim, c = m.num_classes;
  const std::string nn = "num_nodes=" + std::to_string(n) + " in manifest.json";

  NpyInfo info;
  FS_RETURN_IF_ERROR(op.Map("indptr", true, &ds->indptr_, &info));
  FS_RETURN_IF_ERROR(op.ExpectDType(op.FileOf("indptr"), info, {DType::kI64}));
  FS_RETURN_IF_ERROR(op.ExpectShape(op.FileOf("indptr"), info, {n + 1}, "num_nodes + 1, " + nn));

  FS_RETURN_IF_ERROR(op.Map("indices", true, &ds->indices_, &info));
  if (n > INT32_MAX) {
    FS_RETURN_IF_ERROR(op.ExpectDType(op.FileOf("indices"), info, {DType::kI64}));
  } else {
    FS_RETURN_IF_ERROR(op.ExpectDType(op.FileOf("indices"), info, {DType::kI32, DType::kI64}));
  }
  FS_RETURN_IF_ERROR(op.ExpectShape(op.FileOf("indices"), info, {e},
                                    "num_edges=" + std::to_string(e) + " in manifest.json"));

  if (m.feature_layout == FeatureLayout::kDense) {
    FS_RETURN_IF_ERROR(op.Map("features", true, &ds->features_, &info));
    FS_RETURN_IF_ERROR(op.ExpectDType(op.FileOf("features"), info, {m.feature_dtype}));
    FS_RETURN_IF_ERROR(op.ExpectShape(op.FileOf("features"), info, {n, f},
                                      "[num_nodes, feature_dim] from manifest.json"));
  } else {
    FS_RETURN_IF_ERROR(OpenSparseFeatures(op, m, &ds->feature_indptr_, &ds->feature_indices_, &ds->feature_values_));
  }

  FS_RETURN_IF_ERROR(op.Map("labels", true, &ds->labels_, &info));
  FS_RETURN_IF_ERROR(op.ExpectDType(op.FileOf("labels"), info, {DType::kI32, DType::kI64}));
  FS_RETURN_IF_ERROR(op.ExpectShape(op.FileOf("labels"), info, {n}, nn));

  const char* split_names[3] = {"train_ids", "val_ids", "test_ids"};
  Tensor* split_tensors[3] = {&ds->train_ids_, &ds->val_ids_, &ds->test_ids_};
  for (int k = 0; k < 3; ++k) {
    FS_RETURN_IF_ERROR(op.Map(split_names[k], true, split_tensors[k], &info));
    FS_RETURN_IF_ERROR(op.ExpectDType(op.FileOf(split_names[k]), info, {DType::kI64}));
    if (info.shape.size() != 1) {
      return DataLoss(op.Path(op.FileOf(split_names[k])) + ": expected a 1-D array of node ids, got shape " +
                      ShapeToString(info.shape));
    }
  }

  const bool has_orig = m.arrays.count("original_ids") > 0;
  if (m.id_map == IdMap::kNone) {
    if (has_orig) {
      return DataLoss(op.ManifestPath() + ": id_map is \"none\" but \"arrays\" lists original_ids");
    }
  } else {
    FS_RETURN_IF_ERROR(op.Map("original_ids", true, &ds->original_ids_, &info));
    const std::string file = op.FileOf("original_ids");
    if (m.id_map == IdMap::kInt) {
      FS_RETURN_IF_ERROR(op.ExpectDType(file, info, {DType::kI64}));
    } else if (!info.is_bytes) {
      return DataLoss(op.Path(file) + ": id_map is \"string\" so the dtype must be S<width>, got " +
                      ArrayDTypeString(info));
    }
    FS_RETURN_IF_ERROR(op.ExpectShape(file, info, {n}, nn));
  }

  // Values. indptr: 0 at the start, num_edges at the end, non-decreasing.
  {
    const std::string path = op.Path(op.FileOf("indptr"));
    const int64_t* p = ds->indptr_.data<int64_t>();
    if (p[0] != 0) return DataLoss(path + ": indptr[0] must be 0, got " + std::to_string(p[0]));
    const int64_t bad = FirstBad(n, [p](int64_t i) { return p[i] > p[i + 1]; });
    if (bad >= 0) {
      return DataLoss(path + ": indptr must be non-decreasing, but at row " + std::to_string(bad) +
                      " indptr[" + std::to_string(bad) + "]=" + std::to_string(p[bad]) + " > indptr[" +
                      std::to_string(bad + 1) + "]=" + std::to_string(p[bad + 1]));
    }
    if (p[n] != e) {
      return DataLoss(path + ": indptr[" + std::to_string(n) + "] (the last entry) must equal num_edges=" +
                      std::to_string(e) + " from manifest.json, got " + std::to_string(p[n]));
    }
  }
  {
    const int64_t bad = FirstOutside(ds->indices_, 0, n);
    if (bad >= 0) {
      return DataLoss(op.Path(op.FileOf("indices")) + ": position " + std::to_string(bad) + ": value " +
                      std::to_string(IntAt(ds->indices_, bad)) + " is not a node id in [0, " +
                      std::to_string(n) + ")");
    }
  }
  {
    const int64_t bad = FirstOutside(ds->labels_, -1, c);
    if (bad >= 0) {
      return DataLoss(op.Path(op.FileOf("labels")) + ": row " + std::to_string(bad) + ": label " +
                      std::to_string(IntAt(ds->labels_, bad)) + " is not in [-1, num_classes=" +
                      std::to_string(c) + ")");
    }
  }
  if (validate_ids) {
    for (int k = 0; k < 3; ++k) {
      const int64_t bad = FirstOutside(*split_tensors[k], 0, n);
      if (bad >= 0) {
        return DataLoss(op.Path(op.FileOf(split_names[k])) + ": position " + std::to_string(bad) +
                        ": node id " + std::to_string(IntAt(*split_tensors[k], bad)) + " is not in [0, " +
                        std::to_string(n) + ")");
      }
    }
  }
  return ds;
}

}  // namespace foresight::storage
