// SASRec's training batches, packed (no padding): a batch is `batch_size`
// training users (an epoch visits every user once, in a seeded shuffle);
// user b contributes its last max_length (input, next item) pairs and one
// sampled negative item per pair. A pure function of (seed, epoch, index),
// so the embedding table's lookahead window can plan batches ahead.
// Private to the trainer.
#pragma once

#include <cstdint>
#include <vector>

#include "sasrec_data.h"

namespace foresight::trainer::internal {

struct SasrecBatch {
  int epoch = 0;
  int64_t index = 0;
  std::vector<int64_t> lengths;    // tokens per user, >= 1
  // 3T item keys of the item table: T inputs, T next items (positives),
  // T negatives, in token order.
  std::vector<int64_t> keys;
  // i64 [T]: each token's position id in [0, max_length), counted so that
  // a sequence's last token is max_length - 1 (the authors' right-aligned
  // positions: the most recent action always has the same embedding).
  std::vector<int64_t> positions;
  int64_t tokens() const { return static_cast<int64_t>(positions.size()); }
};

class SasrecBatcher {
 public:
  SasrecBatcher(const SasrecData& data, int64_t batch_size, uint64_t seed);
  int64_t batches_per_epoch() const { return batches_; }
  SasrecBatch Make(int epoch, int64_t index) const;

 private:
  const SasrecData& data_;
  int64_t batch_size_;
  uint64_t seed_;
  int64_t batches_;
  // The user order of epoch order_epoch_ (batches are made epoch by epoch).
  mutable int order_epoch_ = -1;
  mutable std::vector<int64_t> order_;
};

}  // namespace foresight::trainer::internal
