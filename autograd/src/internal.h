// Helpers shared by the autograd ops and layers (not installed).
#pragma once

#include <string>

#include "foresight/autograd/tape.h"
#include "foresight/kernels/ops.h"

namespace foresight::autograd::internal {

inline StatusOr<Tensor> EmptyF32(Device device, const Shape& shape) {
  return Tensor::EmptyOn(device, shape, DType::kF32);
}

// Adds what `produce(Tensor* g)` writes (overwriting every element of *g)
// to v's gradient: straight into the gradient when v has none yet (left
// uninitialised, as produce overwrites it), else through a temporary.
template <typename F>
Status AccumulateWith(const ExecContext& ctx, const Var& v, F&& produce) {
  if (!v.grad().defined()) {
    FS_ASSIGN_OR_RETURN(Tensor g, v.NewGrad());
    return produce(&g);
  }
  FS_ASSIGN_OR_RETURN(Tensor tmp, EmptyF32(v.value().device(), v.shape()));
  FS_RETURN_IF_ERROR(produce(&tmp));
  return v.AccumulateGrad(ctx, tmp);
}

// v's gradient for a kernel that takes a beta (Gemm): beta is 0 when the
// gradient was just created (uninitialised: beta = 0 overwrites it), 1 when
// it already holds a contribution.
inline Status GradWithBeta(const Var& v, Tensor* g, float* beta) {
  if (v.grad().defined()) {
    *beta = 1.0f;
    *g = v.grad();
    return Status::OK();
  }
  *beta = 0.0f;
  FS_ASSIGN_OR_RETURN(*g, v.NewGrad());
  return Status::OK();
}

// The backward of y = x w for one (x, w) pair, on dY itself: dX = dY W^T
// and dW = X^T dY, each into its gradient (overwritten when new).
Status LinearBranchBackward(const ExecContext& ctx, const Var& x, const Var& w, const Tensor& gy);
// Its dW half alone, for x's value: dW = X^T dY into w's gradient (nothing
// when w takes none).
Status LinearWeightGrad(const ExecContext& ctx, const Tensor& x, const Var& w, const Tensor& gy);

// An f32 matrix check whose message names the op and the argument.
Status CheckMatrix(const Var& v, const std::string& op, const char* what);

// "<a>.<b>", or just b when a is empty.
inline std::string JoinName(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

// x [N, K] fits w [K, M], and bias is undefined or [M]; messages name op.
Status CheckLinear(const Var& x, const Var& w, const Var& bias, const char* op);

// The value of x w (+ bias when defined), then ReLU when relu: GemmBias
// (the bias and ReLU on each tile of the product), or Gemm then Activate.
StatusOr<Tensor> LinearValue(const ExecContext& ctx, const Tensor& x, const Tensor& w, const Var& bias, bool relu);

// y = x w (+ bias when defined) as one tape node; x [N, K], w [K, M].
StatusOr<Var> LinearOp(Tape& tape, const Var& x, const Var& w, const Var& bias, const char* op);

// y = relu(x w + bias) (bias may be undefined) as one tape node: the bias
// and ReLU in one pass over the product, and in the backward ReLU's mask
// and the bias gradient in one pass. The same bits as
// Relu(LinearOp(x, w, bias)), without the pre-activation kept or its passes.
StatusOr<Var> LinearReluOp(Tape& tape, const Var& x, const Var& w, const Var& bias, const char* op);

// y = (x1 w1 + bias) + x2 w2 as one tape node (bias may be undefined);
// x1 [N, K1], w1 [K1, M], x2 [N, K2], w2 [K2, M]. The same bits as
// Add(LinearOp(x1, w1, bias), LinearOp(x2, w2)), without the Add's passes
// and the backward's copies of dY (linear_pair.cc).
StatusOr<Var> LinearPairOp(Tape& tape, const Var& x1, const Var& w1, const Var& bias, const Var& x2, const Var& w2,
                           const char* op);

}  // namespace foresight::autograd::internal
