#include "foresight/sampler/seed_order.h"

#include <string>
#include <utility>

namespace foresight::sampler {

SeedOrder::SeedOrder(Tensor train_ids, int64_t batch_size, uint64_t seed, bool shuffle, bool drop_last)
    : batch_size_(batch_size), seed_(seed), shuffle_(shuffle) {
  if (!train_ids.defined() || train_ids.dim() != 1 || !train_ids.device().is_cpu() ||
      (train_ids.dtype() != DType::kI32 && train_ids.dtype() != DType::kI64)) {
    status_ = InvalidArgument("SeedOrder: train_ids: expected a 1-D i32 or i64 host tensor, got " +
                              (train_ids.defined() ? train_ids.ToString() : std::string("an undefined tensor")));
    return;
  }
  if (batch_size < 1) {
    status_ = InvalidArgument("SeedOrder: batch_size must be >= 1, got " + std::to_string(batch_size));
    return;
  }
  const int64_t n = train_ids.size(0);
  ids_ = Tensor::Empty({n}, DType::kI64);
  int64_t* dst = ids_.data<int64_t>();
  // Strided views are allowed: copy element by element.
  const int64_t stride = train_ids.stride(0);
  if (train_ids.dtype() == DType::kI32) {
    const int32_t* src = train_ids.data<int32_t>();
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
  } else {
    const int64_t* src = train_ids.data<int64_t>();
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
  }
  num_batches_ = drop_last ? n / batch_size : (n + batch_size - 1) / batch_size;
}

Tensor SeedOrder::EpochOrder(int64_t epoch) const {
  if (!status_.ok()) return Tensor();
  if (!shuffle_) return ids_;
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < 2; ++i) {
    if (cache_[i].order.defined() && cache_[i].epoch == epoch) {
      if (i == 1) std::swap(cache_[0], cache_[1]);
      return cache_[0].order;
    }
  }
  // A fresh tensor per epoch: views handed out for older epochs keep their
  // own bytes alive and never see them change.
  const int64_t n = ids_.numel();
  Tensor order = ids_.Clone();
  int64_t* p = order.data<int64_t>();
  const RngKey key = RngKey::FromSeed(seed_)
                         .Fold(static_cast<uint64_t>(RngPurpose::kShuffle))
                         .Fold(static_cast<uint64_t>(epoch));
  for (int64_t i = n - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(key.Below(static_cast<uint64_t>(i + 1), static_cast<uint64_t>(i), 0));
    std::swap(p[i], p[j]);
  }
  cache_[1] = std::move(cache_[0]);
  cache_[0] = CachedEpoch{epoch, order};
  return order;
}

Tensor SeedOrder::Batch(int64_t epoch, int64_t b) const {
  if (b < 0 || b >= num_batches_) return Tensor();
  const Tensor order = EpochOrder(epoch);
  const int64_t begin = b * batch_size_;
  const int64_t end = begin + batch_size_ < order.size(0) ? begin + batch_size_ : order.size(0);
  return order.Slice(0, begin, end);
}

}  // namespace foresight::sampler
