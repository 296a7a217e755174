#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

const char* ReduceName(Reduce r) {
  switch (r) {
    case Reduce::kSum: return "sum";
    case Reduce::kMean: return "mean";
    case Reduce::kMax: return "max";
  }
  return "unknown";
}

namespace {

Status CheckReduceWeights(const char* op, const Csr& csr, Reduce reduce) {
  if (csr.edge_weight.defined() && reduce != Reduce::kSum) {
    return InvalidArgument(std::string(op) + ": edge weights are only supported with reduce=sum, got reduce=" +
                           ReduceName(reduce));
  }
  return Status::OK();
}

}  // namespace

Status Spmm(const ExecContext& ctx, const Csr& csr, Reduce reduce, const Tensor& x, Tensor* out,
            Tensor* argmax) {
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, "Spmm: csr"));
  FS_RETURN_IF_ERROR(CheckReduceWeights("Spmm", csr, reduce));
  FS_RETURN_IF_ERROR(internal::CheckF32(x, "Spmm: x"));
  FS_RETURN_IF_ERROR(CheckDim(x, 2, "Spmm: x"));
  const int64_t f = x.size(1);
  FS_RETURN_IF_ERROR(CheckShape(x, {csr.num_src, f}, "Spmm: x"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, {csr.num_dst(), f}, DType::kF32, "Spmm: out"));
  if (argmax != nullptr) {
    if (reduce != Reduce::kMax) {
      return InvalidArgument(std::string("Spmm: argmax is only produced by reduce=max, got reduce=") +
                             ReduceName(reduce) + " (pass null)");
    }
    FS_RETURN_IF_ERROR(internal::CheckOutput(argmax, {csr.num_dst(), f}, DType::kI64, "Spmm: argmax"));
  }
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(csr.device(), {&x, out, argmax}, "Spmm"));
  if (csr.device().is_cpu()) return cpu::Spmm(ctx, csr, reduce, x, out, argmax);
  return cuda::Spmm(ctx, csr, reduce, x, out, argmax);
}

Status SpmmBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t, const Tensor& edge_perm,
                    Reduce reduce, const Tensor& grad_out, const Tensor& argmax, Tensor* grad_x) {
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, "SpmmBackward: csr"));
  FS_RETURN_IF_ERROR(CheckReduceWeights("SpmmBackward", csr, reduce));
  const bool needs_perm = reduce == Reduce::kSum && csr.edge_weight.defined();
  if (needs_perm) FS_RETURN_IF_ERROR(CheckDefined(edge_perm, "SpmmBackward: edge_perm (needed for edge weights)"));
  if (reduce != Reduce::kMax) {  // max routes through argmax and ignores csr_t
    FS_RETURN_IF_ERROR(internal::CheckTranspose("SpmmBackward", csr, csr_t, needs_perm ? &edge_perm : nullptr));
  }
  FS_RETURN_IF_ERROR(internal::CheckF32(grad_out, "SpmmBackward: grad_out"));
  FS_RETURN_IF_ERROR(CheckDim(grad_out, 2, "SpmmBackward: grad_out"));
  const int64_t f = grad_out.size(1);
  FS_RETURN_IF_ERROR(CheckShape(grad_out, {csr.num_dst(), f}, "SpmmBackward: grad_out"));
  if (reduce == Reduce::kMax) {
    FS_RETURN_IF_ERROR(CheckDType(argmax, DType::kI64, "SpmmBackward: argmax"));
    FS_RETURN_IF_ERROR(CheckShape(argmax, {csr.num_dst(), f}, "SpmmBackward: argmax"));
    FS_RETURN_IF_ERROR(CheckContiguous(argmax, "SpmmBackward: argmax"));
  }
  FS_RETURN_IF_ERROR(
      internal::CheckOutput(grad_x, {csr.num_src, f}, DType::kF32, "SpmmBackward: grad_x"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(csr.device(), {&grad_out, &argmax, grad_x}, "SpmmBackward"));
  if (csr.device().is_cpu()) return cpu::SpmmBackward(ctx, csr, csr_t, edge_perm, reduce, grad_out, argmax, grad_x);
  return cuda::SpmmBackward(ctx, csr, csr_t, edge_perm, reduce, grad_out, argmax, grad_x);
}

}  // namespace foresight::kernels
