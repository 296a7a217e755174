// The batches of link-prediction training (private to the trainer): the
// positives of each batch in a seeded per-epoch order, and the negatives of
// each chunk of positives, drawn by a counter-based RNG from (seed, epoch,
// batch, chunk, side, draw) alone, so the same seed gives the same batches
// whatever the thread count, store or cache. A batch is known before it is
// trained, which is what lets the lookahead cache see the rows of the next
// W batches (positives and negatives alike).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "foresight/sampler/bucket_order.h"
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
  // The positives the loss is a mean over (0: size). A rank's part of a
  // batch (RankPartOfLinkBatch) keeps the global batch's, so the parts'
  // losses and gradients add up to the batch's.
  int64_t loss_size = 0;
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

// Rank `rank`'s part of `b` among `ranks`: its chunks
// [RankPartBegin(num_chunks), + RankPartSize) with their positives and
// negatives, laid out as a batch of its own (heads, tails, then each
// chunk's tail and head negatives; relation rows, then their reverse
// rows), loss_size the global batch's. Parts of every rank in rank order
// hold each position of `b` once. (link_sharded_trainer.cc)
LinkBatch RankPartOfLinkBatch(const LinkBatch& b, int rank, int ranks);

// options.order "buckets" (link_bucket_batches.cc): the entities form
// options.entity_partitions contiguous id ranges of equal size (+-1; at
// most one partition per entity); an epoch trains the
// triples bucket by bucket in the order of sampler::PlanBuckets with a
// buffer of options.resident_partitions partitions (shuffled within each
// buffer state), and a chunk's negatives are drawn uniformly from the
// partitions resident at its first positive, so a batch reads rows of at
// most resident_partitions + 1 partitions (a batch may straddle two
// buffer states). The loss is unchanged; only which entities serve as
// negatives is restricted, as in PyTorch-BigGraph.
class LinkBatcher {
 public:
  LinkBatcher(const storage::LinkTriples& triples, const TrainOptions& options);
  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  LinkBatch Make(int epoch, int64_t index);
  // Bucket order: partition loads per epoch and their lower bound (0 otherwise).
  int64_t partition_loads() const { return partition_loads_; }
  int64_t partition_loads_lower_bound() const { return partition_loads_bound_; }
  // The partition of entity e (bucket order).
  int PartitionOf(int64_t e) const {
    return static_cast<int>(std::upper_bound(partition_begin_.begin(), partition_begin_.end(), e) -
                            partition_begin_.begin()) - 1;
  }

 private:
  struct EpochOrder {
    std::vector<int64_t> rows;      // training rows in visiting order
    std::vector<int64_t> step_end;  // bucket order: end of each buffer state's rows
    std::vector<std::vector<int>> resident;  // bucket order: each state's partitions
  };
  const EpochOrder& Order(int epoch);
  void BucketOrder(int epoch, EpochOrder* out) const;  // link_bucket_batches.cc
  int64_t Negative(int epoch, int64_t element, int64_t draw, const std::vector<int>* resident) const;

  const storage::LinkTriples& triples_;
  const TrainOptions& options_;
  int64_t num_train_;
  int64_t batches_per_epoch_;
  std::map<int, EpochOrder> orders_;  // the epochs the window spans
  // Bucket order: rows per bucket (head partition * P + tail partition).
  std::vector<std::vector<int64_t>> bucket_rows_;
  std::vector<int64_t> partition_begin_;  // [P + 1]: partition k is [begin[k], begin[k + 1])
  int64_t partition_loads_ = 0, partition_loads_bound_ = 0;
};

}  // namespace foresight::trainer::internal
