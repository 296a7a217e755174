// Helpers shared by the autograd ops and layers (not installed).
#pragma once

#include <string>

#include "foresight/autograd/tape.h"

namespace foresight::autograd::internal {

inline StatusOr<Tensor> EmptyF32(Device device, const Shape& shape) {
  return Tensor::EmptyOn(device, shape, DType::kF32);
}

// Adds what `produce(Tensor* g)` writes (overwriting *g) to v's gradient:
// straight into the gradient when v has none yet, else through a temporary.
template <typename F>
Status AccumulateWith(const ExecContext& ctx, const Var& v, F&& produce) {
  if (!v.grad().defined()) {
    FS_ASSIGN_OR_RETURN(Tensor g, v.MutableGrad());
    return produce(&g);
  }
  FS_ASSIGN_OR_RETURN(Tensor tmp, EmptyF32(v.value().device(), v.shape()));
  FS_RETURN_IF_ERROR(produce(&tmp));
  return v.AccumulateGrad(ctx, tmp);
}

// v's gradient for a kernel that takes a beta (Gemm): beta is 0 when the
// gradient was just created, 1 when it already holds a contribution.
inline Status GradWithBeta(const Var& v, Tensor* g, float* beta) {
  *beta = v.grad().defined() ? 1.0f : 0.0f;
  FS_ASSIGN_OR_RETURN(*g, v.MutableGrad());
  return Status::OK();
}

// An f32 matrix check whose message names the op and the argument.
Status CheckMatrix(const Var& v, const std::string& op, const char* what);

// "<a>.<b>", or just b when a is empty.
inline std::string JoinName(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

// y = x w (+ bias when defined) as one tape node; x [N, K], w [K, M].
StatusOr<Var> LinearOp(Tape& tape, const Var& x, const Var& w, const Var& bias, const char* op);

}  // namespace foresight::autograd::internal
