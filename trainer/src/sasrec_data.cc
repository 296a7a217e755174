#include "sasrec_data.h"

#include <algorithm>

namespace foresight::trainer::internal {

SasrecData::SasrecData(std::unique_ptr<storage::SequencesDataset> ds, int64_t max_length)
    : ds_(std::move(ds)), max_length_(max_length) {
  const int64_t users = ds_->num_users();
  seen_offsets_.reserve(static_cast<size_t>(users) + 1);
  seen_offsets_.push_back(0);
  for (int64_t u = 0; u < users; ++u) {
    const int32_t* b = ds_->items() + ds_->offsets()[u];
    const size_t start = seen_.size();
    seen_.insert(seen_.end(), b, b + ds_->length(u));
    std::sort(seen_.begin() + static_cast<std::ptrdiff_t>(start), seen_.end());
    seen_.erase(std::unique(seen_.begin() + static_cast<std::ptrdiff_t>(start), seen_.end()), seen_.end());
    seen_offsets_.push_back(static_cast<int64_t>(seen_.size()));
    if (ds_->train_length(u) >= 2) train_users_.push_back(u);
    if (ds_->test(u) != 0) eval_users_.push_back(u);
  }
}

int64_t SasrecData::TrainInput(int64_t u, int64_t* length) const {
  const int64_t n = ds_->train_length(u) - 1;
  *length = std::min(n, max_length_);
  return ds_->offsets()[u] + n - *length;
}

int64_t SasrecData::EvalInput(int64_t u, SasrecSplit split, int64_t* length) const {
  const int64_t n = ds_->train_length(u) + (split == SasrecSplit::kTest ? 1 : 0);
  *length = std::min(n, max_length_);
  return ds_->offsets()[u] + n - *length;
}

bool SasrecData::Seen(int64_t u, int64_t item) const {
  return std::binary_search(SeenBegin(u), SeenEnd(u), static_cast<int32_t>(item));
}

int32_t SasrecData::Negative(RngKey key, int64_t u, uint64_t draw) const {
  const int64_t items = ds_->num_items();
  if (SeenEnd(u) - SeenBegin(u) >= items) return 0;
  const RngKey k = key.Fold(static_cast<uint64_t>(u));
  for (uint64_t attempt = 0;; ++attempt) {
    const int64_t item = 1 + static_cast<int64_t>(k.Below(static_cast<uint64_t>(items), draw, attempt));
    if (!Seen(u, item)) return static_cast<int32_t>(item);
  }
}

}  // namespace foresight::trainer::internal
