// y = (x1 w1 + bias) + x2 w2 as one tape node: the self and neighbour
// branches of SAGEConv. Recorded as two Linear nodes and an Add, the sum
// cost an out-of-place Add in the forward (two matrices read, one written)
// and, in the backward, a copy of dY into each branch's gradient before
// the GEMMs read it; here the second product accumulates into y and the
// backward's GEMMs read dY itself. The rounding is the separate ops':
// fl(fl(fl(x1 w1) + bias) + fl(x2 w2)), so results are the same bits.
//
// Why the accumulating GEMM (beta = 1) gives those bits: the CPU's sgemm
// (oneDNN's) sums each element of a product over k in registers and adds
// alpha times that sum to C once (beta = 0 first zeroes C, so C = 0 + sum
// exactly); with alpha = 1 and beta = 1 the one rounding is y + fl(x2 w2),
// the Add's. That holds while the sgemm does not split k into blocks (a
// split adds each block's partial sum to C in turn, so y would join the
// first partial sum instead of the whole) and the call is not a single row
// (oneDNN's gemv path, which cpu::Gemm's even tiles avoid unless the
// product itself has one row, which keeps the temporary). Measured on oneDNN 2.6.3 (sgemm, one
// thread, k from 8 to 1024 in steps of 8, calls of 7 to 512 rows), the
// sums stay whole up to k = 384. OpenBLAS 0.3.21, which foresight used
// before, kept them whole up to 448 with its SkylakeX kernels, 320 with
// Haswell's and 128 with its Prescott fallback. So k up to
// kAccumulateMaxK accumulates: SAGEConv's first layer, by far the larger
// product (128 features in the speed run); a larger k goes to a temporary
// added after. SAGEConvTest checks both against the separate ops' bits.
#include "internal.h"

namespace foresight::autograd::internal {

namespace {

constexpr int64_t kAccumulateMaxK = 128;

}  // namespace

StatusOr<Var> LinearPairOp(Tape& tape, const Var& x1, const Var& w1, const Var& bias, const Var& x2, const Var& w2,
                           const char* op) {
  for (const auto& [v, what] : {std::pair<const Var&, const char*>{x1, "first input"}, {w1, "first weight"},
                                {x2, "second input"}, {w2, "second weight"}}) {
    FS_RETURN_IF_ERROR(CheckMatrix(v, op, what));
  }
  const Shape& s1 = x1.shape();
  const Shape& s2 = x2.shape();
  if (s1[1] != w1.shape()[0] || s2[1] != w2.shape()[0] || s1[0] != s2[0] || w1.shape()[1] != w2.shape()[1]) {
    return InvalidArgument(std::string(op) + ": inputs " + ShapeToString(s1) + " and " + ShapeToString(s2) +
                           " do not fit weights " + ShapeToString(w1.shape()) + " and " + ShapeToString(w2.shape()) +
                           " (each input's columns must equal its weight's rows; the inputs' rows and the "
                           "weights' columns must agree)");
  }
  const bool has_bias = bias.defined();
  if (has_bias && bias.shape() != Shape{w1.shape()[1]}) {
    return InvalidArgument(std::string(op) + ": bias " + ShapeToString(bias.shape()) + " does not fit weight " +
                           ShapeToString(w1.shape()));
  }
  const ExecContext& ctx = tape.ctx();
  const Device device = x1.value().device();
  const Shape out_shape{s1[0], w1.shape()[1]};
  FS_ASSIGN_OR_RETURN(Tensor y, EmptyF32(device, out_shape));
  if (has_bias) {
    // The bias joins each tile of y while it is in cache (GemmBias: the
    // bits of Gemm then AddBias, without AddBias's pass over all of y).
    FS_RETURN_IF_ERROR(kernels::GemmBias(ctx, x1.value(), w1.value(), bias.value(), /*relu=*/false, &y));
  } else {
    FS_RETURN_IF_ERROR(kernels::Gemm(ctx, x1.value(), false, w1.value(), false, 1.0f, 0.0f, &y));
  }
  if (s2[1] <= kAccumulateMaxK && s2[0] > 1) {
    FS_RETURN_IF_ERROR(kernels::Gemm(ctx, x2.value(), false, w2.value(), false, 1.0f, 1.0f, &y));
  } else {
    FS_ASSIGN_OR_RETURN(Tensor t, EmptyF32(device, out_shape));
    FS_RETURN_IF_ERROR(kernels::Gemm(ctx, x2.value(), false, w2.value(), false, 1.0f, 0.0f, &t));
    FS_RETURN_IF_ERROR(kernels::Add(ctx, y, t, &y));
  }
  std::vector<Var> inputs{x1, w1, x2, w2};
  if (has_bias) inputs.push_back(bias);
  return tape.RecordGrad(inputs, y, [x1, w1, bias, x2, w2](const ExecContext& ctx, const Tensor& gy) -> Status {
    // Each branch as LinearOp's backward takes it, on dY itself.
    FS_RETURN_IF_ERROR(LinearBranchBackward(ctx, x1, w1, gy));
    FS_RETURN_IF_ERROR(LinearBranchBackward(ctx, x2, w2, gy));
    if (bias.requires_grad()) {
      FS_RETURN_IF_ERROR(AccumulateWith(ctx, bias, [&](Tensor* gb) { return kernels::SumRows(ctx, gy, gb); }));
    }
    return Status::OK();
  });
}

}  // namespace foresight::autograd::internal
