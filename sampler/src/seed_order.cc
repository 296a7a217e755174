#include "foresight/sampler/seed_order.h"

#include <string>
#include <utility>

#include "order_util.h"

namespace foresight::sampler {

SeedOrder::SeedOrder(Tensor train_ids, int64_t batch_size, uint64_t seed, bool shuffle, bool drop_last)
    : batch_size_(batch_size), seed_(seed), shuffle_(shuffle) {
  StatusOr<Tensor> ids = internal::CopyIdsToI64(train_ids, "SeedOrder");
  if (!ids.ok()) {
    status_ = ids.status();
    return;
  }
  if (batch_size < 1) {
    status_ = InvalidArgument("SeedOrder: batch_size must be >= 1, got " + std::to_string(batch_size));
    return;
  }
  ids_ = std::move(ids).value();
  const int64_t n = ids_.numel();
  num_batches_ = drop_last ? n / batch_size : (n + batch_size - 1) / batch_size;
}

// A fresh tensor per epoch: views handed out for older epochs keep their
// own bytes alive and never see them change.
Tensor SeedOrder::Shuffled(int64_t epoch) const {
  Tensor order = ids_.Clone();
  internal::Shuffle(order.data<int64_t>(), order.numel(),
                    RngKey::FromSeed(seed_)
                        .Fold(static_cast<uint64_t>(RngPurpose::kShuffle))
                        .Fold(static_cast<uint64_t>(epoch)));
  return order;
}

Tensor SeedOrder::EpochOrder(int64_t epoch) const {
  if (!status_.ok()) return Tensor();
  if (!shuffle_) return ids_;
  return cache_.Get(epoch, [this](int64_t e) { return Shuffled(e); });
}

Tensor SeedOrder::Batch(int64_t epoch, int64_t b) const {
  if (b < 0 || b >= num_batches_) return Tensor();
  const Tensor order = EpochOrder(epoch);
  const int64_t begin = b * batch_size_;
  const int64_t end = begin + batch_size_ < order.size(0) ? begin + batch_size_ : order.size(0);
  return order.Slice(0, begin, end);
}

}  // namespace foresight::sampler
