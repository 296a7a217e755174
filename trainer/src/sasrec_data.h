// SASRec's view of a sequences dataset: which users train, the item span a
// user's model input reads for training and for each evaluation split, and
// negative items drawn from those the user never interacted with.
// Private to the trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "foresight/core/rng.h"
#include "foresight/storage/sequences_dataset.h"

namespace foresight::trainer::internal {

enum class SasrecSplit { kValid, kTest };

class SasrecData {
 public:
  // Builds each user's sorted item set (the negatives' exclusion list).
  SasrecData(std::unique_ptr<storage::SequencesDataset> ds, int64_t max_length);

  const storage::SequencesDataset& dataset() const { return *ds_; }
  int64_t num_items() const { return ds_->num_items(); }
  int64_t max_length() const { return max_length_; }
  // Users whose training prefix has >= 2 items (an input and a next item),
  // as the authors' sampler requires.
  const std::vector<int64_t>& train_users() const { return train_users_; }
  // Users with a validation and a test item.
  const std::vector<int64_t>& eval_users() const { return eval_users_; }

  // Training: inputs are the training prefix but its last item, the targets
  // the prefix but its first; both truncated to the last max_length.
  // Returns the offset into items() of the first input; *length the count.
  int64_t TrainInput(int64_t u, int64_t* length) const;
  // Evaluation input: the training prefix (valid) or it and the validation
  // item (test), truncated to the last max_length.
  int64_t EvalInput(int64_t u, SasrecSplit split, int64_t* length) const;
  int32_t Target(int64_t u, SasrecSplit split) const {
    return split == SasrecSplit::kValid ? ds_->valid(u) : ds_->test(u);
  }
  // True when user u ever interacted with `item`.
  bool Seen(int64_t u, int64_t item) const;
  // The user's distinct items, ascending.
  const int32_t* SeenBegin(int64_t u) const { return seen_.data() + seen_offsets_[u]; }
  const int32_t* SeenEnd(int64_t u) const { return seen_.data() + seen_offsets_[u + 1]; }
  // An item in [1, I] the user never interacted with, a pure function of
  // (key, u, draw): rejection sampling as the authors' random_neq (a user
  // who saw every item gets 0, which no caller meets on real data).
  int32_t Negative(RngKey key, int64_t u, uint64_t draw) const;

 private:
  std::unique_ptr<storage::SequencesDataset> ds_;
  int64_t max_length_;
  std::vector<int64_t> train_users_, eval_users_;
  std::vector<int32_t> seen_;
  std::vector<int64_t> seen_offsets_;
};

}  // namespace foresight::trainer::internal
