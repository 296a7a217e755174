// Seed ordering: which training nodes make up batch b of epoch e. An order
// is a pure function of its construction arguments and (epoch, b), so a
// resumed run jumps to any (epoch, batch) and gets exactly the batches the
// original run would have seen, and a lookahead stage can ask for future
// batches before the trainer reaches them.
#pragma once

#include <cstdint>
#include <vector>

#include "foresight/core/rng.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/sampler/epoch_cache.h"

namespace foresight::sampler {

// The interface the trainer and the lookahead cache use; a partition-aware
// order implements it too. Implementations are thread-safe.
class BatchOrder {
 public:
  virtual ~BatchOrder() = default;
  // Batches per epoch (the same for every epoch).
  virtual int64_t num_batches() const = 0;
  // i64 [n <= batch size]: the seed ids of batch b of `epoch` (a host tensor;
  // may be a view shared with the order's cache: do not write to it).
  // Returns an undefined tensor when b is outside [0, num_batches()).
  virtual Tensor Batch(int64_t epoch, int64_t b) const = 0;
};

// Uniformly shuffled batches: epoch e visits the ids in the order of a
// Fisher-Yates permutation drawn from RngKey::FromSeed(seed).Fold(kShuffle)
// .Fold(e), computed on first use and cached (the two most recent epochs,
// so a lookahead crossing an epoch boundary does not recompute), then cut
// into consecutive batches of batch_size. Without shuffle every epoch
// keeps the order of train_ids.
class SeedOrder : public BatchOrder {
 public:
  // `train_ids`: 1-D i32/i64 host tensor (copied). Invalid arguments (a bad
  // tensor, batch_size < 1) leave the order with no batches and status()
  // saying why.
  SeedOrder(Tensor train_ids, int64_t batch_size, uint64_t seed, bool shuffle = true, bool drop_last = false);

  // OK unless the constructor's arguments were invalid.
  const Status& status() const { return status_; }

  // ceil(n / batch_size), or floor with drop_last (the short tail batch is
  // then never visited).
  int64_t num_batches() const override { return num_batches_; }
  Tensor Batch(int64_t epoch, int64_t b) const override;

  int64_t num_ids() const { return ids_.defined() ? ids_.numel() : 0; }
  int64_t batch_size() const { return batch_size_; }
  // The whole order of `epoch` (i64 [num_ids()], shared; do not write).
  Tensor EpochOrder(int64_t epoch) const;

 private:
  Tensor Shuffled(int64_t epoch) const;

  Tensor ids_;  // i64 copy of train_ids
  int64_t batch_size_ = 0;
  uint64_t seed_ = 0;
  bool shuffle_ = true;
  int64_t num_batches_ = 0;
  Status status_;

  mutable internal::EpochCache<Tensor> cache_;
};

}  // namespace foresight::sampler
