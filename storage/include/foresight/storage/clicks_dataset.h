// A click-log dataset (manifest kind "clicks"): the input of DLRM training.
// One row per sample; every array has the samples in the same order and the
// train / validation / test splits are contiguous row ranges:
//   dense.npy      f32 [N, D]       dense features (already transformed)
//   labels.npy     u8  [N]          0 or 1
//   cat_<k>.npy    i32/i64 [N] or [N, L]  row ids of categorical field k in
//                                   [0, rows_k); [N, L] is a multi-hot bag of L
//   vocab_<k>.npy  |S<w> [rows_k]   optional: the raw value of each row
//                                   (row 0, the out-of-vocabulary row, is b"")
//   click_prob.npy f32 [N]          optional: the true click probability
//                                   (generated datasets)
// Manifest "clicks" (ClicksLayout::ToJson): num_samples, dense names,
// categorical fields with their table sizes, split ranges, id mode.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/storage/dataset.h"

namespace foresight::storage {

inline constexpr char kClickDenseArray[] = "dense";
inline constexpr char kClickLabelsArray[] = "labels";
inline constexpr char kClickProbArray[] = "click_prob";
// "cat_<k>" and "vocab_<k>" for field k (0-based).
std::string ClickIdsArray(int64_t field);
std::string ClickVocabArray(int64_t field);

// One categorical field: its embedding table's row count and bag size.
struct ClickField {
  std::string name;
  int64_t rows = 0;      // ids lie in [0, rows)
  int64_t bag_size = 1;  // ids per sample (1: the array is [N])
  bool has_vocab = false;
};

struct RowRange {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};

// What manifest "clicks" says.
struct ClicksLayout {
  int64_t num_samples = 0;
  std::vector<std::string> dense;  // dense feature names
  std::vector<ClickField> fields;
  RowRange train, val, test;  // cover [0, num_samples) in this order
  std::string id_mode;        // "vocab", "hash" or "generated"

  nlohmann::json ToJson() const;
};
// Parses manifest "clicks"; errors name `origin` and the field.
Status ParseClicksLayout(const nlohmann::json& j, const std::string& origin, ClicksLayout* out);

// A validated, read-only clicks dataset; arrays are mmap'd. Thread-safe
// after Open (immutable).
class ClicksDataset {
 public:
  // Opens `dir` (manifest kind "clicks") and checks every array's dtype and
  // shape against the layout, labels in {0, 1}, dense values finite and, with
  // validate_ids, every id in [0, rows) of its field. Errors name the file and
  // the first bad row. The O(N) scans run over DefaultThreadPool().
  // FailedPrecondition for a staging directory (CheckNotStagingDir).
  static StatusOr<std::unique_ptr<ClicksDataset>> Open(const std::string& dir, bool validate_ids = true);

  const ClicksLayout& layout() const { return layout_; }
  int64_t num_samples() const { return layout_.num_samples; }
  int64_t num_dense() const { return static_cast<int64_t>(layout_.dense.size()); }
  int64_t num_fields() const { return static_cast<int64_t>(layout_.fields.size()); }
  const ClickField& field(int64_t k) const { return layout_.fields[static_cast<size_t>(k)]; }
  const Tensor& dense() const { return dense_; }    // f32 [N, D]
  const Tensor& labels() const { return labels_; }  // u8 [N]
  // i32 or i64, [N] (bag size 1) or [N, bag_size].
  const Tensor& ids(int64_t k) const { return ids_[static_cast<size_t>(k)]; }
  // u8 [rows, w] (numpy |S<w>), undefined when the field has no vocabulary.
  const Tensor& vocab(int64_t k) const { return vocab_[static_cast<size_t>(k)]; }
  // f32 [N] or undefined.
  const Tensor& click_prob() const { return click_prob_; }
  const DatasetManifest& manifest() const { return manifest_; }
  const std::string& dir() const { return dir_; }

 private:
  friend class DatasetWriter;  // validates its staging dir before the commit
  ClicksDataset() = default;
  // Open without the staging check.
  static StatusOr<std::unique_ptr<ClicksDataset>> OpenDir(const std::string& dir, bool validate_ids);
  std::string dir_;
  DatasetManifest manifest_;
  ClicksLayout layout_;
  Tensor dense_, labels_, click_prob_;
  std::vector<Tensor> ids_, vocab_;
};

}  // namespace foresight::storage
