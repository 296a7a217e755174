#include "sasrec_batches.h"

#include <algorithm>

namespace foresight::trainer::internal {

namespace {
constexpr uint64_t kOrderStream = 0x5341534F;     // "SASO": the epoch's user order
constexpr uint64_t kNegativeStream = 0x5341534E;  // "SASN": training negatives
}  // namespace

SasrecBatcher::SasrecBatcher(const SasrecData& data, int64_t batch_size, uint64_t seed)
    : data_(data), batch_size_(batch_size), seed_(seed) {
  const int64_t n = static_cast<int64_t>(data.train_users().size());
  batches_ = (n + batch_size - 1) / batch_size;
}

SasrecBatch SasrecBatcher::Make(int epoch, int64_t index) const {
  // The epoch's order: a seeded Fisher-Yates shuffle, kept for the epoch's
  // other batches.
  if (order_epoch_ != epoch) {
    order_ = data_.train_users();
    const RngKey key = RngKey::FromSeed(seed_).Fold(kOrderStream).Fold(static_cast<uint64_t>(epoch));
    for (int64_t i = static_cast<int64_t>(order_.size()) - 1; i > 0; --i) {
      const int64_t j = static_cast<int64_t>(key.Below(static_cast<uint64_t>(i + 1), static_cast<uint64_t>(i), 0));
      std::swap(order_[static_cast<size_t>(i)], order_[static_cast<size_t>(j)]);
    }
    order_epoch_ = epoch;
  }
  const std::vector<int64_t>& order = order_;
  SasrecBatch b;
  b.epoch = epoch;
  b.index = index;
  const int64_t begin = index * batch_size_;
  const int64_t end = std::min<int64_t>(begin + batch_size_, static_cast<int64_t>(order.size()));
  const int32_t* items = data_.dataset().items();
  const RngKey neg = RngKey::FromSeed(seed_).Fold(kNegativeStream).Fold(static_cast<uint64_t>(epoch));
  std::vector<int64_t> inputs, targets, negatives;
  for (int64_t i = begin; i < end; ++i) {
    const int64_t u = order[static_cast<size_t>(i)];
    int64_t len = 0;
    const int64_t first = data_.TrainInput(u, &len);
    b.lengths.push_back(len);
    for (int64_t t = 0; t < len; ++t) {
      inputs.push_back(items[first + t]);
      targets.push_back(items[first + t + 1]);
      negatives.push_back(data_.Negative(neg, u, static_cast<uint64_t>(t)));
      b.positions.push_back(data_.max_length() - len + t);
    }
  }
  b.keys = std::move(inputs);
  b.keys.insert(b.keys.end(), targets.begin(), targets.end());
  b.keys.insert(b.keys.end(), negatives.begin(), negatives.end());
  return b;
}

}  // namespace foresight::trainer::internal
