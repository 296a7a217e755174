// Dropout keyed by row identity on the tape (kernels/keyed_dropout.h):
// what several ranks need to draw the one-rank masks for their parts of a
// batch. Defined in functional.cc beside Dropout.
#pragma once

#include "foresight/autograd/tape.h"
#include "foresight/core/tensor.h"

namespace foresight::autograd {

// Dropout keyed by row (kernels::DropoutRows): row r's mask follows
// row_ids[r] (i64 [rows], any device: copied to x's), the row's global
// identity, so a process holding part of a batch draws the whole batch's
// masks for its rows. An undefined row_ids keys rows by position (Dropout).
// Identity when !tape.training() or p == 0.
StatusOr<Var> Dropout(Tape& tape, const Var& x, float p, const Tensor& row_ids);
// Dropout(Relu(x), p, row_ids) as one node, the same bits
// (kernels::ReluDropoutRows): one pass instead of two, no ReLU output, one
// backward pass through a mask that holds ReLU's sign. It draws the tape's
// next key as Dropout does. Relu(x) alone when !tape.training() or p == 0.
StatusOr<Var> ReluDropout(Tape& tape, const Var& x, float p, const Tensor& row_ids);

}  // namespace foresight::autograd
