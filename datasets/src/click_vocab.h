// Per-field vocabularies of click-log categorical values (private to
// foresight_datasets). Counting holds (field, value) -> count in a hash map;
// when its estimated size passes half the memory budget the map is sorted
// and spilled to an unlinked temporary file as a run, and Finish merges the
// runs (a k-way merge summing the counts of equal keys), so counting never
// holds more than the budget whatever the number of distinct values. Only
// the kept values (count >= min_frequency) are then held in RAM, since the
// second pass must map every value to its row; they must fit the budget.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::datasets::internal {

// Row 0 of every table is the shared out-of-vocabulary row (missing and rare
// values); kept values get rows 1.. in decreasing count, ties by value bytes.
class ClickVocabulary {
 public:
  ClickVocabulary(int64_t num_fields, int64_t min_frequency, size_t memory_budget_bytes, std::string temp_dir);
  ~ClickVocabulary();
  ClickVocabulary(const ClickVocabulary&) = delete;
  ClickVocabulary& operator=(const ClickVocabulary&) = delete;

  // Counts one occurrence of `value` (non-empty) in `field`.
  Status Add(int64_t field, std::string_view value);
  // Merges the counts and builds the tables. ResourceExhausted when the kept
  // values do not fit the memory budget.
  Status Finish();

  // After Finish. The row of `value` in `field` (0 when not kept or empty).
  int64_t Row(int64_t field, std::string_view value) const;
  int64_t rows(int64_t field) const { return static_cast<int64_t>(values_[static_cast<size_t>(field)].size()) + 1; }
  // Kept values of `field`: value i has row i + 1.
  const std::vector<std::string>& values(int64_t field) const { return values_[static_cast<size_t>(field)]; }
  int64_t runs_spilled() const { return static_cast<int64_t>(runs_.size()); }

 private:
  Status Spill();
  Status Keep(const std::string& key, int64_t count);

  int64_t num_fields_;
  int64_t min_frequency_;
  size_t budget_;
  std::string temp_dir_;
  std::unordered_map<std::string, int64_t> counts_;  // key: 2-byte field (big-endian) + value
  size_t counts_bytes_ = 0;
  std::vector<FILE*> runs_;
  std::string key_;  // scratch
  // Kept (value, count) per field while merging, then the values in row order.
  std::vector<std::vector<std::pair<std::string, int64_t>>> kept_;
  size_t kept_bytes_ = 0;
  std::vector<std::vector<std::string>> values_;
  std::vector<std::unordered_map<std::string_view, int64_t>> rows_;
};

}  // namespace foresight::datasets::internal
