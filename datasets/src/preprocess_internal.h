// Shared pieces of the preprocess formats (private to foresight_datasets):
// the state one run builds up, the feature row sink, string-id relabelling
// and the per-format readers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "foresight/core/status.h"
#include "foresight/core/thread_pool.h"
#include "foresight/datasets/line_reader.h"
#include "foresight/datasets/preprocess.h"
#include "foresight/graph/csr_builder.h"
#include "foresight/storage/dataset.h"
#include "foresight/storage/npy.h"

namespace foresight::datasets::internal {

// Streams feature rows (f32 in) to features.npy as f32 or f16, applying the
// row normalisation. Rows must arrive in node order.
class FeatureSink {
 public:
  static StatusOr<std::unique_ptr<FeatureSink>> Create(const std::string& path, int64_t dim, DType dtype,
                                                       FeatureNorm norm, ThreadPool* pool);
  // Copies one row of dim() floats.
  Status AppendRow(const float* row);
  Status Finish();
  int64_t rows() const { return rows_; }
  int64_t dim() const { return dim_; }

 private:
  FeatureSink() = default;
  Status Flush();
  std::unique_ptr<storage::NpyWriter> writer_;
  int64_t dim_ = 0;
  DType dtype_ = DType::kF32;
  FeatureNorm norm_ = FeatureNorm::kNone;
  ThreadPool* pool_ = nullptr;
  std::vector<float> block_;
  std::vector<uint16_t> half_;
  int64_t block_rows_ = 0;
  int64_t capacity_rows_ = 0;
  int64_t rows_ = 0;
};

// Relabels string tokens to 0..n-1 in first-appearance order.
class StringIds {
 public:
  // The id of `token`, inserting it when new.
  int64_t Intern(std::string_view token);
  // The id of `token`, or -1.
  int64_t Find(std::string_view token) const;
  int64_t size() const { return static_cast<int64_t>(names_.size()); }
  const std::string& name(int64_t id) const { return names_[static_cast<size_t>(id)]; }
  // Writes original_ids.npy as '|S<max length>' (at least 1).
  Status Write(const std::string& path) const;

 private:
  std::unordered_map<std::string, int64_t> map_;
  std::vector<std::string> names_;
};

// Everything one preprocess run accumulates before the final writes.
struct Job {
  const PreprocessOptions* opt = nullptr;
  storage::DatasetWriter* writer = nullptr;
  graph::CsrBuilder* builder = nullptr;
  ThreadPool* pool = nullptr;
  DType feature_dtype = DType::kF32;

  int64_t num_nodes = -1;  // -1 until known
  int64_t estimated_edges = 0;  // edge-list lines expected (progress); 0 = unknown
  int64_t feature_dim = -1;  // -1: no features written yet
  bool sparse_features = false;  // the CSR feature arrays were written (not features.npy)
  std::vector<int64_t> labels;  // empty or [num_nodes]; -1 unlabelled
  std::vector<std::string> class_names;  // when labels are named classes
  bool string_ids = false;
  StringIds ids;
  bool has_given_split = false;  // ogb split folder
  std::vector<int64_t> given_split[3];
  int64_t dropped_missing = 0;
  nlohmann::json source = nlohmann::json::object();
  std::vector<std::string> warnings;

  std::string Staging(const char* file) const { return writer->StagingPath(file); }
  void Warn(const std::string& text);
};

// What ReadTextLabels learnt that the checks after the edges need.
struct LabelFileInfo {
  bool per_row = false;     // no id column: row i labels node i
  int64_t max_id = -1;      // int ids: the largest id labelled, and its line
  int64_t max_id_line = 0;
  std::vector<char> seen;   // [id] = 1 when a row labels node id
};
// Reads a text label file (label_column / id_column / class_names / header
// options) into job->labels, and job->class_names for named classes. Int
// ids are checked against `n` (< 0: not known yet); string ids must already
// name nodes (edges read first) unless allow_isolated_nodes.
Status ReadTextLabels(Job* job, const std::string& path, int64_t n, LabelFileInfo* info);

// Format readers: fill the builder, features (features.npy), labels, ids.
Status ReadLinqs(Job* job);
Status ReadEdgeList(Job* job);
// Before an edge-list run: estimates the edges (disk_space.h), logs the
// disk space the spilled runs (`spill_edge_bytes` per edge) and the dataset
// need, and refuses (ResourceExhausted naming the folders, bytes needed
// and free) when they do not fit.
// Returns the estimated edge count (0 when not estimated).
StatusOr<int64_t> CheckEdgeListDiskSpace(const PreprocessOptions& o, int64_t spill_edge_bytes);
Status ReadOgb(Job* job);

// Streams an .npy feature matrix ([N, F], any numeric dtype) into `sink`-
// compatible rows; rejects NaN / inf naming row and column. Returns rows.
StatusOr<int64_t> CopyNpyFeatures(Job* job, const std::string& path);
// Reads text feature rows (all columns, or all but the first when
// `id_column`), calling on_row(line reader, first field, values).
// Writes features for node-ordered rows (no id column) into features.npy.
StatusOr<int64_t> CopyTextFeatures(Job* job, const std::string& path);
// Writes an [N, 0] features.npy when the input had none.
Status WriteEmptyFeatures(Job* job);

// Sparse feature entries as read, in file order: (node, feature, value).
struct SparseEntries {
  std::vector<int64_t> node;
  std::vector<int32_t> feature;
  std::vector<float> value;
  int64_t max_node = -1;
  int64_t max_feature = -1;
  void Add(int64_t n, int64_t f, float v);
};
// --features names a JSON object of feature-id lists (.json, .json.gz, .json.xz).
bool IsJsonFeatures(const std::string& path);
// Reads --features F.json or --sparse-features F (COO lines). Integer node
// ids must be below n (n < 0: not known yet); string ids are interned.
// Errors name the file and the line (and byte offset for JSON).
Status ReadSparseFeatures(Job* job, int64_t n, SparseEntries* entries);
// Writes feature_indptr/indices/values.npy for job->num_nodes rows (nodes
// without entries get empty rows; repeated ids in a row are summed; row
// normalisation applies) and sets job->feature_dim (--feature-dim, else the
// largest id + 1) and job->sparse_features.
Status WriteSparseFeatures(Job* job, SparseEntries* entries);

// Parses one float field of `reader`'s current line; `column` is 1-based.
Status ParseFeature(const LineReader& reader, std::string_view field, int64_t column, float* out);

// The base name of a path ("a/b/cora.cites.xz" -> "cora.cites.xz").
std::string BaseName(const std::string& path);
bool EndsWith(const std::string& s, const std::string& suffix);
bool IsDirectory(const std::string& path);
bool IsFile(const std::string& path);
// OK when `path` exists and is not a directory (a file, or a pipe read as
// one); else "<what> <path> does not exist" or "... is a directory; expected
// a file", so a folder passed for a file is not reported as missing.
Status CheckInputFile(const std::string& path, const std::string& what);

}  // namespace foresight::datasets::internal
