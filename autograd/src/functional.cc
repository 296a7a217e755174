#include "foresight/autograd/functional.h"

#include "foresight/autograd/keyed_dropout.h"
#include "foresight/kernels/keyed_dropout.h"
#include "internal.h"

namespace foresight::autograd {

using internal::AccumulateWith;
using internal::CheckMatrix;
using internal::EmptyF32;
using internal::GradWithBeta;

namespace internal {

Status CheckMatrix(const Var& v, const std::string& op, const char* what) {
  if (!v.defined()) return InvalidArgument(op + ": " + what + " is undefined");
  const Tensor& t = v.value();
  if (t.dim() != 2 || t.dtype() != DType::kF32) {
    return InvalidArgument(op + ": " + what + " must be an f32 matrix, got " + t.ToString());
  }
  return Status::OK();
}

Status LinearWeightGrad(const ExecContext& ctx, const Tensor& x, const Var& w, const Tensor& gy) {
  if (!w.requires_grad()) return Status::OK();
  float beta;
  Tensor g;
  FS_RETURN_IF_ERROR(GradWithBeta(w, &g, &beta));
  return kernels::Gemm(ctx, x, true, gy, false, 1.0f, beta, &g);
}

Status LinearBranchBackward(const ExecContext& ctx, const Var& x, const Var& w, const Tensor& gy) {
  if (x.requires_grad()) {  // dX = dY W^T
    float beta;
    Tensor g;
    FS_RETURN_IF_ERROR(GradWithBeta(x, &g, &beta));
    FS_RETURN_IF_ERROR(kernels::Gemm(ctx, gy, false, w.value(), true, 1.0f, beta, &g));
  }
  return LinearWeightGrad(ctx, x.value(), w, gy);
}

// x [N, K], w [K, M], bias undefined or [M].
Status CheckLinear(const Var& x, const Var& w, const Var& bias, const char* op) {
  FS_RETURN_IF_ERROR(CheckMatrix(x, op, "input"));
  FS_RETURN_IF_ERROR(CheckMatrix(w, op, "weight"));
  if (x.shape()[1] != w.shape()[0]) {
    return InvalidArgument(std::string(op) + ": input " + ShapeToString(x.shape()) + " does not fit weight " +
                           ShapeToString(w.shape()) + " (input columns must equal weight rows)");
  }
  if (bias.defined() && bias.shape() != Shape{w.shape()[1]}) {
    return InvalidArgument(std::string(op) + ": bias " + ShapeToString(bias.shape()) + " does not fit weight " +
                           ShapeToString(w.shape()));
  }
  return Status::OK();
}

StatusOr<Tensor> LinearValue(const ExecContext& ctx, const Tensor& x, const Tensor& w, const Var& bias, bool relu) {
  FS_ASSIGN_OR_RETURN(Tensor y, EmptyF32(x.device(), {x.size(0), w.size(1)}));
  if (bias.defined()) {
    FS_RETURN_IF_ERROR(kernels::GemmBias(ctx, x, w, bias.value(), relu, &y));
    return y;
  }
  FS_RETURN_IF_ERROR(kernels::Gemm(ctx, x, false, w, false, 1.0f, 0.0f, &y));
  if (relu) FS_RETURN_IF_ERROR(kernels::Activate(ctx, kernels::Activation::kRelu, 0.0f, y, &y));
  return y;
}

StatusOr<Var> LinearOp(Tape& tape, const Var& x, const Var& w, const Var& bias, const char* op) {
  FS_RETURN_IF_ERROR(CheckLinear(x, w, bias, op));
  FS_ASSIGN_OR_RETURN(Tensor y, LinearValue(tape.ctx(), x.value(), w.value(), bias, /*relu=*/false));
  std::vector<Var> inputs{x, w};
  if (bias.defined()) inputs.push_back(bias);
  return tape.RecordGrad(inputs, y, [x, w, bias](const ExecContext& ctx, const Tensor& gy) -> Status {
    FS_RETURN_IF_ERROR(LinearBranchBackward(ctx, x, w, gy));
    if (bias.requires_grad()) {
      FS_RETURN_IF_ERROR(AccumulateWith(ctx, bias, [&](Tensor* gb) { return kernels::SumRows(ctx, gy, gb); }));
    }
    return Status::OK();
  });
}

StatusOr<Var> LinearReluOp(Tape& tape, const Var& x, const Var& w, const Var& bias, const char* op) {
  FS_RETURN_IF_ERROR(CheckLinear(x, w, bias, op));
  FS_ASSIGN_OR_RETURN(Tensor y, LinearValue(tape.ctx(), x.value(), w.value(), bias, /*relu=*/true));
  std::vector<Var> inputs{x, w};
  if (bias.defined()) inputs.push_back(bias);
  // The backward reads y (the mask: y > 0 exactly where the pre-activation
  // is), so the pre-activation is never kept.
  return tape.RecordGrad(inputs, y, [x, w, bias, y](const ExecContext& ctx, const Tensor& gy) -> Status {
    FS_ASSIGN_OR_RETURN(Tensor gz, EmptyF32(y.device(), y.shape()));
    if (bias.requires_grad()) {
      FS_RETURN_IF_ERROR(AccumulateWith(ctx, bias, [&](Tensor* gb) {
        return kernels::ReluBackwardSumRows(ctx, y, gy, &gz, gb);
      }));
    } else {
      FS_RETURN_IF_ERROR(kernels::ReluBackwardSumRows(ctx, y, gy, &gz, nullptr));
    }
    return LinearBranchBackward(ctx, x, w, gz);
  });
}

}  // namespace internal

StatusOr<Var> MatMul(Tape& tape, const Var& x, const Var& w) {
  return internal::LinearOp(tape, x, w, Var(), "MatMul");
}

StatusOr<Var> AddBias(Tape& tape, const Var& x, const Var& bias) {
  FS_RETURN_IF_ERROR(CheckMatrix(x, "AddBias", "input"));
  if (!bias.defined() || bias.shape() != Shape{x.shape()[1]}) {
    return InvalidArgument("AddBias: bias must be [" + std::to_string(x.shape()[1]) + "] for input " +
                           ShapeToString(x.shape()) +
                           (bias.defined() ? ", got " + ShapeToString(bias.shape()) : ", got undefined"));
  }
  const ExecContext& ctx = tape.ctx();
  FS_ASSIGN_OR_RETURN(Tensor y, EmptyF32(x.value().device(), x.shape()));
  FS_RETURN_IF_ERROR(kernels::AddBias(ctx, x.value(), bias.value(), &y));
  return tape.RecordGrad({x, bias}, y, [x, bias](const ExecContext& ctx, const Tensor& gy) -> Status {
    if (x.requires_grad()) FS_RETURN_IF_ERROR(x.AccumulateGrad(ctx, gy));
    if (bias.requires_grad()) {
      FS_RETURN_IF_ERROR(AccumulateWith(ctx, bias, [&](Tensor* gb) { return kernels::SumRows(ctx, gy, gb); }));
    }
    return Status::OK();
  });
}

StatusOr<Var> Add(Tape& tape, const Var& a, const Var& b) {
  if (!a.defined() || !b.defined()) return InvalidArgument("Add: an operand is undefined");
  if (a.shape() != b.shape()) {
    return InvalidArgument("Add: shapes differ: " + ShapeToString(a.shape()) + " vs " + ShapeToString(b.shape()));
  }
  FS_ASSIGN_OR_RETURN(Tensor y, EmptyF32(a.value().device(), a.shape()));
  FS_RETURN_IF_ERROR(kernels::Add(tape.ctx(), a.value(), b.value(), &y));
  return tape.RecordGrad({a, b}, y, [a, b](const ExecContext& ctx, const Tensor& gy) -> Status {
    if (a.requires_grad()) FS_RETURN_IF_ERROR(a.AccumulateGrad(ctx, gy));
    if (b.requires_grad()) FS_RETURN_IF_ERROR(b.AccumulateGrad(ctx, gy));
    return Status::OK();
  });
}

StatusOr<Var> Activation(Tape& tape, kernels::Activation act, float param, const Var& x) {
  if (!x.defined()) return InvalidArgument("Activation: input is undefined");
  FS_ASSIGN_OR_RETURN(Tensor y, EmptyF32(x.value().device(), x.shape()));
  FS_RETURN_IF_ERROR(kernels::Activate(tape.ctx(), act, param, x.value(), &y));
  return tape.RecordGrad({x}, y, [x, act, param](const ExecContext& ctx, const Tensor& gy) -> Status {
    return AccumulateWith(ctx, x, [&](Tensor* gx) {
      return kernels::ActivateBackward(ctx, act, param, x.value(), gy, gx);
    });
  });
}

StatusOr<Var> Relu(Tape& tape, const Var& x) { return Activation(tape, kernels::Activation::kRelu, 0.0f, x); }

StatusOr<Var> Elu(Tape& tape, const Var& x) { return Activation(tape, kernels::Activation::kElu, 1.0f, x); }

StatusOr<Var> Dropout(Tape& tape, const Var& x, float p) { return Dropout(tape, x, p, Tensor()); }

namespace {

// Dropout (relu false) or ReluDropout (relu true), keyed by row_ids when
// they are defined, by position otherwise.
StatusOr<Var> KeyedDropoutOp(Tape& tape, const Var& x, float p, const Tensor& row_ids, bool relu) {
  const std::string op = relu ? "ReluDropout" : "Dropout";
  if (!(p >= 0.0f && p < 1.0f)) return InvalidArgument(op + ": p must be in [0, 1), got " + std::to_string(p));
  if (!x.defined()) return InvalidArgument(op + ": input is undefined");
  if (!tape.training() || p == 0.0f) return relu ? Relu(tape, x) : x;
  const ExecContext ctx = tape.ctx().WithRng(tape.NextRngKey());
  const Device device = x.value().device();
  FS_ASSIGN_OR_RETURN(Tensor y, EmptyF32(device, x.shape()));
  // The mask is only for the backward: an input no gradient flows to (the
  // gathered features of a GNN's first layer) gets none, a byte per
  // element less written. The kept elements and y are the same either way.
  const bool backward = tape.recording() && x.requires_grad();
  Tensor mask;
  if (backward) {
    FS_ASSIGN_OR_RETURN(mask, Tensor::EmptyOn(device, x.shape(), DType::kU8));
  }
  Tensor* mask_out = backward ? &mask : nullptr;
  if (row_ids.defined() || relu) {
    Tensor ids = row_ids;
    if (!ids.defined()) {
      // Keyed by position: ids 0..R-1 give Dropout's draws (keyed_dropout.h),
      // the only keyed kernel that has the ReLU.
      const int64_t rows = x.shape().empty() ? 0 : x.shape()[0];
      ids = Tensor::Empty({rows}, DType::kI64);
      int64_t* pi = ids.data<int64_t>();
      for (int64_t r = 0; r < rows; ++r) pi[r] = r;
    }
    if (ids.device() != device) {
      FS_ASSIGN_OR_RETURN(ids, ids.To(device));
    }
    FS_RETURN_IF_ERROR(relu ? kernels::ReluDropoutRows(ctx, p, x.value(), ids, &y, mask_out)
                            : kernels::DropoutRows(ctx, p, x.value(), ids, &y, mask_out));
  } else {
    FS_RETURN_IF_ERROR(kernels::Dropout(ctx, p, x.value(), &y, mask_out));
  }
  if (!backward) return Var(y);
  // ReluDropout's mask is 0 wherever ReLU's gradient is, so one
  // DropoutBackward is the gradient of both.
  return tape.RecordGrad({x}, y, [x, p, mask](const ExecContext& ctx, const Tensor& gy) -> Status {
    return AccumulateWith(ctx, x, [&](Tensor* gx) { return kernels::DropoutBackward(ctx, p, mask, gy, gx); });
  });
}

}  // namespace

StatusOr<Var> Dropout(Tape& tape, const Var& x, float p, const Tensor& row_ids) {
  return KeyedDropoutOp(tape, x, p, row_ids, /*relu=*/false);
}

StatusOr<Var> ReluDropout(Tape& tape, const Var& x, float p, const Tensor& row_ids) {
  return KeyedDropoutOp(tape, x, p, row_ids, /*relu=*/true);
}

StatusOr<Var> SliceRows(Tape& tape, const Var& x, int64_t begin, int64_t end) {
  if (!x.defined() || x.value().dim() < 1) return InvalidArgument("SliceRows: input must have rows");
  const int64_t rows = x.shape()[0];
  if (begin < 0 || begin > end || end > rows) {
    return OutOfRange("SliceRows: [" + std::to_string(begin) + ", " + std::to_string(end) +
                      ") is not a row range of " + ShapeToString(x.shape()));
  }
  if (begin == 0 && end == rows) return x;
  // A view: the rows share bytes with x.
  Tensor y = x.value().Slice(0, begin, end);
  return tape.RecordGrad({x}, y, [x, begin, end](const ExecContext& ctx, const Tensor& gy) -> Status {
    FS_ASSIGN_OR_RETURN(Tensor gx, x.MutableGrad());
    Tensor slice = gx.Slice(0, begin, end);
    return kernels::Add(ctx, slice, gy, &slice);
  });
}

StatusOr<Var> GatherRows(Tape& tape, const Var& x, const Tensor& ids) {
  FS_RETURN_IF_ERROR(CheckMatrix(x, "GatherRows", "input"));
  FS_RETURN_IF_ERROR(CheckDefined(ids, "GatherRows ids"));
  if (ids.dim() != 1) return InvalidArgument("GatherRows: ids must be 1-D, got " + ids.ToString());
  FS_ASSIGN_OR_RETURN(Tensor y, EmptyF32(x.value().device(), {ids.size(0), x.shape()[1]}));
  FS_RETURN_IF_ERROR(kernels::GatherRows(tape.ctx(), x.value(), ids, &y));
  return tape.RecordGrad({x}, y, [x, ids](const ExecContext& ctx, const Tensor& gy) -> Status {
    FS_ASSIGN_OR_RETURN(Tensor gx, x.MutableGrad());
    return kernels::IndexAddRows(ctx, gy, ids, &gx);
  });
}

StatusOr<Var> Aggregate(Tape& tape, GraphBlock& block, kernels::Reduce reduce, const Var& x) {
  FS_RETURN_IF_ERROR(CheckMatrix(x, "Aggregate", "input"));
  if (x.shape()[0] != block.num_src()) {
    return InvalidArgument("Aggregate: input " + ShapeToString(x.shape()) + " has " +
                           std::to_string(x.shape()[0]) + " rows but the block has " +
                           std::to_string(block.num_src()) + " sources");
  }
  const ExecContext& ctx = tape.ctx();
  const Device device = x.value().device();
  const int64_t f = x.shape()[1];
  FS_ASSIGN_OR_RETURN(Tensor y, EmptyF32(device, {block.num_dst(), f}));
  Tensor argmax;
  if (reduce == kernels::Reduce::kMax) {
    FS_ASSIGN_OR_RETURN(argmax, Tensor::EmptyOn(device, {block.num_dst(), f}, DType::kI64));
  }
  FS_RETURN_IF_ERROR(kernels::Spmm(ctx, block.csr(), reduce, x.value(), &y,
                                   reduce == kernels::Reduce::kMax ? &argmax : nullptr));
  if (!tape.recording() || !x.requires_grad()) return Var(y);
  // The transpose (cached in the block) is taken now and held by value, so
  // the backward does not depend on the block outliving the tape.
  FS_ASSIGN_OR_RETURN(const GraphBlock::Transposed* t, block.Transpose(ctx));
  return tape.RecordGrad(
      {x}, y,
      [x, reduce, argmax, csr = block.csr(), csr_t = t->csr, perm = t->edge_perm](
          const ExecContext& ctx, const Tensor& gy) -> Status {
        return AccumulateWith(ctx, x, [&](Tensor* gx) {
          return kernels::SpmmBackward(ctx, csr, csr_t, perm, reduce, gy, argmax, gx);
        });
      });
}

StatusOr<Var> LogSoftmax(Tape& tape, const Var& logits) {
  FS_RETURN_IF_ERROR(CheckMatrix(logits, "LogSoftmax", "logits"));
  FS_ASSIGN_OR_RETURN(Tensor y, EmptyF32(logits.value().device(), logits.shape()));
  FS_RETURN_IF_ERROR(kernels::LogSoftmax(tape.ctx(), logits.value(), &y));
  return tape.RecordGrad({logits}, y, [logits, y](const ExecContext& ctx, const Tensor& gy) -> Status {
    return AccumulateWith(ctx, logits, [&](Tensor* gx) { return kernels::LogSoftmaxBackward(ctx, y, gy, gx); });
  });
}

StatusOr<Var> NllLoss(Tape& tape, const Var& logp, const Tensor& labels) {
  FS_RETURN_IF_ERROR(CheckMatrix(logp, "NllLoss", "log-probabilities"));
  const ExecContext& ctx = tape.ctx();
  const Device device = logp.value().device();
  const bool want_grad = tape.recording() && logp.requires_grad();
  Tensor grad;
  if (want_grad) {
    FS_ASSIGN_OR_RETURN(grad, EmptyF32(device, logp.shape()));
  }
  float loss = 0.0f;
  FS_RETURN_IF_ERROR(kernels::NllLoss(ctx, logp.value(), labels, &loss, want_grad ? &grad : nullptr));
  Tensor host = Tensor::Empty({1}, DType::kF32);
  host.data<float>()[0] = loss;
  FS_ASSIGN_OR_RETURN(Tensor y, host.To(device));
  if (!want_grad) return Var(y);
  return tape.RecordGrad({logp}, y, [logp, grad](const ExecContext& ctx, const Tensor& gy) -> Status {
    FS_ASSIGN_OR_RETURN(Tensor gy_host, gy.To(Device::Cpu()));
    const float scale = gy_host.data<float>()[0];
    if (scale == 1.0f) return logp.AccumulateGrad(ctx, grad);
    return AccumulateWith(ctx, logp, [&](Tensor* gx) { return kernels::Scale(ctx, grad, scale, gx); });
  });
}

}  // namespace foresight::autograd
