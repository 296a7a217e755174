// The on-disk dataset: a directory holding manifest.json and .npy arrays
// (graph in CSR by destination, features, labels, splits, original ids).
// Dataset opens and validates one read-only (arrays are mmap'd);
// DatasetWriter builds one in a staging directory and renames it into place,
// so an interrupted build never leaves a directory that looks valid: a
// staging directory is refused by Dataset::Open under any name it has
// before that rename, and the next run on the same output removes it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/storage/file_io.h"
#include "foresight/storage/npy.h"

namespace foresight::storage {

inline constexpr char kManifestFile[] = "manifest.json";
inline constexpr char kDatasetFormat[] = "foresight-dataset";
inline constexpr int kDatasetVersion = 1;

// Standard array files.
inline constexpr char kIndptrFile[] = "indptr.npy";        // i64 [N+1]
inline constexpr char kIndicesFile[] = "indices.npy";      // i32 (N < 2^31) or i64 [E]
inline constexpr char kFeaturesFile[] = "features.npy";    // f32 or f16 [N, F]
inline constexpr char kLabelsFile[] = "labels.npy";        // i32 or i64 [N], -1 unlabelled
inline constexpr char kTrainIdsFile[] = "train_ids.npy";   // i64 [*]
inline constexpr char kValIdsFile[] = "val_ids.npy";       // i64 [*]
inline constexpr char kTestIdsFile[] = "test_ids.npy";     // i64 [*]
inline constexpr char kOriginalIdsFile[] = "original_ids.npy";  // i64 [N] or |S<w> [N]
// Sparse node features (feature_layout "sparse", instead of features.npy):
// row v's features are feature_indices[feature_indptr[v] : feature_indptr[v+1]]
// with those values, i.e. scipy.sparse.csr_matrix((values, indices, indptr),
// shape=(N, feature_dim)).
inline constexpr char kFeatureIndptrFile[] = "feature_indptr.npy";    // i64 [N+1]
inline constexpr char kFeatureIndicesFile[] = "feature_indices.npy";  // i32 [nnz], in [0, feature_dim)
inline constexpr char kFeatureValuesFile[] = "feature_values.npy";    // f32 [nnz], finite

// One entry of manifest "arrays".
struct ArrayEntry {
  std::string file;   // relative to the dataset dir
  std::string dtype;  // "f32", "f16", "i32", "i64", "u8", or "S<w>" for byte strings
  Shape shape;
};

enum class IdMap { kNone, kInt, kString };
const char* IdMapName(IdMap m);  // "none", "int", "string"

// How node features are stored: dense features.npy [N, F], or sparse CSR
// rows (the three feature_*.npy arrays above; no features.npy). Manifest
// "feature_layout", absent for dense (datasets written before it existed).
enum class FeatureLayout { kDense, kSparse };
const char* FeatureLayoutName(FeatureLayout l);  // "dense", "sparse"

// Manifest "kind": what the arrays describe. Absent in manifests written
// before clicks datasets existed, which are graphs.
inline constexpr char kKindGraph[] = "graph";
inline constexpr char kKindClicks[] = "clicks";  // storage/clicks_dataset.h
inline constexpr char kKindSequences[] = "sequences";  // storage/sequences_dataset.h

struct DatasetManifest {
  std::string format = kDatasetFormat;
  int version = kDatasetVersion;
  std::string kind = kKindGraph;  // kKindGraph, kKindClicks or kKindSequences
  std::string name;
  int64_t num_nodes = 0;
  int64_t num_edges = 0;
  int64_t feature_dim = 0;
  DType feature_dtype = DType::kF32;  // f32 or f16 (dense layout; sparse values are f32)
  FeatureLayout feature_layout = FeatureLayout::kDense;
  int64_t num_classes = 0;
  // Names of classes 0..num_classes-1 when the labels were class names
  // (written as "class_names" only then); empty otherwise. UTF-8.
  std::vector<std::string> class_names;
  IdMap id_map = IdMap::kNone;
  // Keyed by array name ("indptr", "indices", "features", ...).
  std::map<std::string, ArrayEntry> arrays;
  // null, or the object `foresight partition` writes (graph/partition.h):
  // {"method", "parts": P, "offsets": [P+1 row offsets], ...stats}.
  nlohmann::json partitions;
  nlohmann::json source = nlohmann::json::object();  // free-form provenance
  // kind "clicks" only: fields, table sizes, split ranges (clicks_dataset.h).
  nlohmann::json clicks;
  // null, or the link-prediction triples of a graph (link_triples.h).
  nlohmann::json link;
  // kind "sequences" only: counts and split (sequences_dataset.h).
  nlohmann::json sequences;

  nlohmann::json ToJson() const;
};

// Parses a manifest; errors name `origin` (the file path) and the field.
Status ParseManifest(const nlohmann::json& j, const std::string& origin, DatasetManifest* out);
// The row offsets of manifest "partitions" (empty when it is null):
// partition p is rows [offsets[p], offsets[p+1]). DataLoss naming `origin`
// unless they are P+1 (P = "parts" >= 1) non-decreasing integers from 0 to
// num_nodes. ParseManifest checks them.
StatusOr<std::vector<int64_t>> ParsePartitionOffsets(const DatasetManifest& m, const std::string& origin);
// Reads and parses `path` (NotFound when absent, DataLoss when not JSON).
StatusOr<DatasetManifest> ReadManifest(const std::string& path);
// OK unless `dir` is a DatasetWriter staging directory (it holds the
// writer's marker naming it): then FailedPrecondition naming the output
// being written and the writing process. Readers of datasets call it before
// trusting a manifest (Dataset::Open does).
Status CheckNotStagingDir(const std::string& dir);

class DatasetWriter;

// A validated, read-only dataset. Arrays are mmap'd; accessors return views
// that keep the mapping alive. Thread-safe after Open (immutable).
class Dataset {
 public:
  // Opens a graph dataset (kind "graph"; a clicks dataset is
  // InvalidArgument naming ClicksDataset) and validates manifest vs
  // array headers and shapes, CSR
  // structure (indptr monotone, 0..E; indices in [0, N)), labels in [-1, C).
  // With validate_ids, split ids must lie in [0, N). The O(N+E) checks run
  // over DefaultThreadPool(). FailedPrecondition for a staging directory
  // (CheckNotStagingDir).
  static StatusOr<std::unique_ptr<Dataset>> Open(const std::string& dir, bool validate_ids = true);

  const Tensor& indptr() const { return indptr_; }
  const Tensor& indices() const { return indices_; }
  // Dense layout only (undefined for sparse features).
  const Tensor& features() const { return features_; }
  // Sparse layout only (undefined for dense): the CSR rows of the features,
  // i64 [N+1], i32 [nnz] in [0, feature_dim), f32 [nnz].
  bool sparse_features() const { return manifest_.feature_layout == FeatureLayout::kSparse; }
  const Tensor& feature_indptr() const { return feature_indptr_; }
  const Tensor& feature_indices() const { return feature_indices_; }
  const Tensor& feature_values() const { return feature_values_; }
  const Tensor& labels() const { return labels_; }
  const Tensor& train_ids() const { return train_ids_; }
  const Tensor& val_ids() const { return val_ids_; }
  const Tensor& test_ids() const { return test_ids_; }
  // Undefined when the dataset has no original ids. i64 [N] for integer ids,
  // u8 [N, w] for string ids (zero-padded, as numpy '|S<w>').
  const Tensor& original_ids() const { return original_ids_; }

  int64_t num_nodes() const { return manifest_.num_nodes; }
  int64_t num_edges() const { return manifest_.num_edges; }
  int64_t feature_dim() const { return manifest_.feature_dim; }
  int64_t num_classes() const { return manifest_.num_classes; }
  const DatasetManifest& manifest() const { return manifest_; }
  const std::string& dir() const { return dir_; }
  // Partition p is rows [offsets[p], offsets[p+1]) of every node array; P+1
  // non-decreasing offsets from 0 to num_nodes. Empty when unpartitioned.
  const std::vector<int64_t>& partition_offsets() const { return partition_offsets_; }

 private:
  friend class DatasetWriter;  // validates its staging dir before the commit
  Dataset() = default;
  // Open without the staging check.
  static StatusOr<std::unique_ptr<Dataset>> OpenDir(const std::string& dir, bool validate_ids);
  std::string dir_;
  DatasetManifest manifest_;
  Tensor feature_indptr_, feature_indices_, feature_values_;
  Tensor indptr_, indices_, features_, labels_, train_ids_, val_ids_, test_ids_, original_ids_;
  std::vector<int64_t> partition_offsets_;
};

// Builds a dataset in "<out_dir>.tmp-<pid>-<random>" and renames it to
// out_dir on Commit. The staging dir holds a marker that Dataset::Open
// refuses and that this process keeps locked, so a later run tells it from
// one in use (storage/src/staging_dir.h). Create first removes the stale
// staging dirs that killed runs on the same out_dir left (logging each).
// Destroyed without Commit, it removes the staging dir and the parent
// directories that Create made. Not thread-safe.
class DatasetWriter {
 public:
  // AlreadyExists when out_dir exists and !overwrite. With overwrite, an
  // existing out_dir must be a foresight dataset (has a manifest.json with
  // format "foresight-dataset"), else FailedPrecondition. Makes out_dir's
  // missing parent directories.
  static StatusOr<std::unique_ptr<DatasetWriter>> Create(const std::string& out_dir, bool overwrite);
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  // Path of `file` inside the staging dir (for tools that write it directly).
  std::string StagingPath(const std::string& file) const;
  const std::string& staging_dir() const { return staging_; }
  const std::string& out_dir() const { return out_dir_; }
  // A streaming writer for staging file `file` (caller calls Finish).
  StatusOr<std::unique_ptr<NpyWriter>> OpenArray(const std::string& file, DType dtype, Shape inner);
  // Writes a whole host tensor as staging file `file`.
  Status WriteArray(const std::string& file, const Tensor& t);
  // The manifest to fill (name, counts, feature_dim, num_classes, id_map,
  // source). "arrays" is filled by Commit.
  DatasetManifest& manifest() { return manifest_; }
  // Fills manifest "arrays" from the .npy files present in staging (array
  // name = file name without ".npy"), writes manifest.json last, fsyncs and
  // renames staging to out_dir. With overwrite, an old dataset there is
  // swapped out atomically (renameat2 RENAME_EXCHANGE; where the file
  // system lacks it, two renames leave out_dir absent for an instant), so
  // out_dir is at every instant absent, the old dataset or the new one.
  // The staging dir is validated first by the reader of its kind
  // (Dataset::OpenDir or ClicksDataset::OpenDir).
  Status Commit();

 private:
  DatasetWriter(std::string out_dir, std::string staging, bool overwrite, std::vector<std::string> made_dirs);
  // Swaps the new dataset in for the one at out_dir_ (Commit with overwrite).
  Status Replace();
  std::string out_dir_;
  std::string staging_;
  bool overwrite_;
  bool committed_ = false;
  // Parent directories of out_dir that Create made, deepest first.
  std::vector<std::string> made_dirs_;
  // The staging marker, locked while this writer lives.
  ScopedFd lock_;
  DatasetManifest manifest_;
};

}  // namespace foresight::storage
