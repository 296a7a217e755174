// Data-parallel training's view of a seed order: rank r of N takes the
// r-th of N contiguous, near-equal parts of every global batch. The global
// batches are those of a one-rank run (the wrapped order is keyed by seed
// and epoch, never by rank), and neighbour sampling is keyed by (seed,
// epoch, batch, hop, node), so the ranks' parts together are exactly the
// one-rank batch. A part may be empty when a batch has fewer seeds than
// there are ranks. Private to the trainer.
#pragma once

#include "foresight/sampler/seed_order.h"

namespace foresight::trainer::internal {

class RankShareOrder : public sampler::BatchOrder {
 public:
  // `global` outlives this order. 0 <= rank < ranks.
  RankShareOrder(const sampler::BatchOrder* global, int rank, int ranks)
      : global_(global), rank_(rank), ranks_(ranks) {}

  int64_t num_batches() const override { return global_->num_batches(); }
  // Seeds [n * rank / ranks, n * (rank + 1) / ranks) of the global batch of n.
  Tensor Batch(int64_t epoch, int64_t b) const override;

 private:
  const sampler::BatchOrder* global_;
  int rank_;
  int ranks_;
};

}  // namespace foresight::trainer::internal
