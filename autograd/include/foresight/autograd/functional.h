// Differentiable ops on Vars: each runs the kernel forward and records its
// backward on the tape. Shapes as in kernels/ops.h.
#pragma once

#include "foresight/autograd/graph_block.h"
#include "foresight/autograd/tape.h"
#include "foresight/kernels/ops.h"

namespace foresight::autograd {

StatusOr<Var> MatMul(Tape& tape, const Var& x, const Var& w);          // x [N,K] @ w [K,M]
StatusOr<Var> AddBias(Tape& tape, const Var& x, const Var& bias);      // + bias [M]
StatusOr<Var> Add(Tape& tape, const Var& a, const Var& b);
StatusOr<Var> Activation(Tape& tape, kernels::Activation act, float param, const Var& x);
StatusOr<Var> Relu(Tape& tape, const Var& x);
StatusOr<Var> Elu(Tape& tape, const Var& x);
// Identity when !tape.training() or p == 0.
StatusOr<Var> Dropout(Tape& tape, const Var& x, float p);
// Rows [begin, end) of x as a new Var (gradient flows back into the slice).
StatusOr<Var> SliceRows(Tape& tape, const Var& x, int64_t begin, int64_t end);
StatusOr<Var> GatherRows(Tape& tape, const Var& x, const Tensor& ids);
// Aggregation over the block: sum (with edge weights if set), mean or max.
StatusOr<Var> Aggregate(Tape& tape, GraphBlock& block, kernels::Reduce reduce, const Var& x);
StatusOr<Var> LogSoftmax(Tape& tape, const Var& logits);
// Mean NLL over rows with label >= 0; a [1] f32 Var.
StatusOr<Var> NllLoss(Tape& tape, const Var& logp, const Tensor& labels);

// DLRM's interaction of x [B, D] with the pooled tables emb [B, T*E]
// (kernels::FeatureInteraction); gradients flow to both.
StatusOr<Var> FeatureInteraction(Tape& tape, kernels::Interaction kind, int64_t num_tables, const Var& x,
                                 const Var& emb);
// Mean binary cross-entropy of sigmoid(logits) against targets (f32, one
// per logit); a [1] f32 Var.
StatusOr<Var> BceWithLogitsLoss(Tape& tape, const Var& logits, const Tensor& targets);

}  // namespace foresight::autograd
