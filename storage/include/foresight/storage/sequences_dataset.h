// A dataset of user action sequences (manifest kind "sequences"): the input
// of sequential recommendation (SASRec). Users one after another, each
// user's actions in time order; items are renumbered 1..I so that 0 never
// names an item (a sentinel for "no item", never a padding token):
//   items.npy     i32 [N]      every action's item in 1..I
//   offsets.npy   i64 [U + 1]  user u's actions are items[offsets[u], offsets[u+1])
//   valid.npy     i32 [U]      the leave-one-out validation item (the
//                              second-to-last action), 0 for a user with
//                              fewer than 3 actions
//   test.npy      i32 [U]      the test item (the last action), or 0 likewise
//   user_ids.npy  i64 [U]      the input's user ids
//   item_ids.npy  i64 [I + 1]  the input's id of item i (entry 0: -1)
// A user with fewer than 3 actions keeps them all for training and is not
// evaluated, as the SASRec authors' data_partition does. Manifest
// "sequences": {num_users, num_items, num_actions, eval_users, split}.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/storage/dataset.h"

namespace foresight::storage {

// Users with fewer actions than this keep them all for training.
inline constexpr int64_t kMinEvalActions = 3;

class SequencesDataset {
 public:
  // Opens and validates `dir`: array dtypes and shapes, offsets from 0 to N
  // never decreasing, items in [1, I], and valid / test equal to each
  // user's last two actions (0 below kMinEvalActions). Errors name the file
  // and the first bad row. FailedPrecondition for a staging directory.
  static StatusOr<std::unique_ptr<SequencesDataset>> Open(const std::string& dir);

  int64_t num_users() const { return num_users_; }
  int64_t num_items() const { return num_items_; }  // I: items are 1..I
  const int32_t* items() const { return items_.data<int32_t>(); }
  const int64_t* offsets() const { return offsets_.data<int64_t>(); }
  int64_t length(int64_t u) const { return offsets()[u + 1] - offsets()[u]; }
  // The training prefix of user u: all actions, or all but the last two.
  int64_t train_length(int64_t u) const { return test(u) != 0 ? length(u) - 2 : length(u); }
  int32_t valid(int64_t u) const { return valid_.data<int32_t>()[u]; }
  int32_t test(int64_t u) const { return test_.data<int32_t>()[u]; }
  const Tensor& user_ids() const { return user_ids_; }
  const Tensor& item_ids() const { return item_ids_; }
  const DatasetManifest& manifest() const { return manifest_; }

 private:
  friend class DatasetWriter;  // validates its staging dir before the commit
  SequencesDataset() = default;
  static StatusOr<std::unique_ptr<SequencesDataset>> OpenDir(const std::string& dir);
  DatasetManifest manifest_;
  int64_t num_users_ = 0, num_items_ = 0;
  Tensor items_, offsets_, valid_, test_, user_ids_, item_ids_;
};

}  // namespace foresight::storage
