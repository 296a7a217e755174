// The loss of a batch of link-prediction positives against their chunks'
// negatives, and its gradient with respect to the rows it read (private to
// the trainer). Shared by the shallow models, whose rows are embedding-table
// rows, and the GNN encoders, whose rows are the encoder's outputs.
#pragma once

#include <cstdint>

#include "foresight/core/context.h"
#include "foresight/core/status.h"
#include "foresight/core/tensor.h"
#include "foresight/trainer/train_options.h"
#include "link_batches.h"
#include "link_scorer.h"

namespace foresight::trainer::internal {

// Scores every positive of `b` and its chunk's negatives, corrupting the
// tail and the head, with `scorer` (one GEMM per chunk and side), and
// returns the mean loss over the 2B queries (options.loss: softmax or
// logistic; a negative equal to the query's true entity is left out) plus
// options.regularizer on the positives' head, tail (and relation) rows.
// options.sampled_softmax adds log(num_entities / negatives) to every
// negative's logit (num_entities: the entities the uniform negatives are
// drawn from).
//   e [K, dim]  f32: the rows of b.entity_keys, in that order;
//   r [KR, dim] f32: the rows of b.relation_keys (unused by dot);
//   de, dr: same shapes, zeroed by the caller; receive d loss / d e, d r
//   (a row repeated in the keys gets a gradient per position).
// options.reciprocal selects the reverse relation rows for head queries.
// Deterministic for any thread count of ctx.pool.
Status LinkBatchLoss(const ExecContext& ctx, const TrainOptions& options, const LinkScorer& scorer,
                     int64_t num_entities, const LinkBatch& b, const Tensor& e, const Tensor& r, Tensor* de,
                     Tensor* dr, double* loss);

}  // namespace foresight::trainer::internal
