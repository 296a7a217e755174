// The batches of link-prediction training (private to the trainer): the
// positives of each batch in a seeded per-epoch order, and the negatives of
// each chunk of positives, drawn by a counter-based RNG from (seed, epoch,
// batch, chunk, side, draw) alone, so the same seed gives the same batches
// whatever the thread count, store or cache. A batch is known before it is
// trained, which is what lets the lookahead cache see the rows of the next
// W batches (positives and negatives alike).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "foresight/storage/link_triples.h"
#include "foresight/trainer/train_options.h"

namespace foresight::trainer::internal {

// One training batch of B positives in chunks of C (the last may be
// shorter), each chunk with N tail and N head negatives.
struct LinkBatch {
  int epoch = 0;       // from 0
  int64_t index = 0;   // batch within the epoch
  int64_t size = 0;    // B
  int64_t chunk = 0;   // C
  int64_t num_chunks = 0;
  int64_t negatives = 0;  // N
  std::vector<int64_t> heads, relations, tails;  // [B]
  // The relation rows the batch reads: relations [B], then with reciprocal
  // relations their reverse rows (r + R) [B].
  std::vector<int64_t> relation_keys;
  // The entity rows the batch reads, in this order: heads [B], tails [B],
  // then per chunk c: its tail negatives [N], its head negatives [N].
  std::vector<int64_t> entity_keys;
  int64_t TailNegatives(int64_t c) const { return 2 * size + 2 * c * negatives; }
  int64_t HeadNegatives(int64_t c) const { return TailNegatives(c) + negatives; }
};

class LinkBatcher {
 public:
  LinkBatcher(const storage::LinkTriples& triples, const TrainOptions& options);
  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  LinkBatch Make(int epoch, int64_t index);

 private:
  const std::vector<int64_t>& Order(int epoch);
  int64_t Negative(int epoch, int64_t element, int64_t draw) const;

  const storage::LinkTriples& triples_;
  const TrainOptions& options_;
  int64_t num_train_;
  int64_t batches_per_epoch_;
  std::map<int, std::vector<int64_t>> orders_;  // the epochs the window spans
};

}  // namespace foresight::trainer::internal
