#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

namespace {

Status CheckP(const char* op, float p) {
  if (!(p >= 0.0f && p < 1.0f)) {
    return InvalidArgument(std::string(op) + ": p must be in [0, 1), got " + std::to_string(p));
  }
  return Status::OK();
}

Status CheckMask(const char* op, const Tensor& mask, int64_t numel) {
  const std::string what = std::string(op) + ": mask";
  FS_RETURN_IF_ERROR(CheckDType(mask, DType::kU8, what.c_str()));
  FS_RETURN_IF_ERROR(CheckContiguous(mask, what.c_str()));
  if (mask.numel() != numel) {
    return InvalidArgument(what + ": expected " + std::to_string(numel) + " elements, got " +
                           std::to_string(mask.numel()));
  }
  return Status::OK();
}

}  // namespace

Status Dropout(const ExecContext& ctx, float p, const Tensor& x, Tensor* out, Tensor* mask) {
  FS_RETURN_IF_ERROR(CheckP("Dropout", p));
  FS_RETURN_IF_ERROR(internal::CheckF32(x, "Dropout: x"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, x.shape(), DType::kF32, "Dropout: out"));
  if (mask != nullptr) FS_RETURN_IF_ERROR(CheckMask("Dropout", *mask, x.numel()));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(x.device(), {out, mask}, "Dropout"));
  if (x.device().is_cpu()) return cpu::Dropout(ctx, p, x, out, mask);
  return cuda::Dropout(ctx, p, x, out, mask);
}

Status DropoutBackward(const ExecContext& ctx, float p, const Tensor& mask, const Tensor& grad_out,
                       Tensor* grad_x) {
  FS_RETURN_IF_ERROR(CheckP("DropoutBackward", p));
  FS_RETURN_IF_ERROR(internal::CheckF32(grad_out, "DropoutBackward: grad_out"));
  FS_RETURN_IF_ERROR(CheckMask("DropoutBackward", mask, grad_out.numel()));
  FS_RETURN_IF_ERROR(
      internal::CheckOutput(grad_x, grad_out.shape(), DType::kF32, "DropoutBackward: grad_x"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(grad_out.device(), {&mask, grad_x}, "DropoutBackward"));
  if (grad_out.device().is_cpu()) return cpu::DropoutBackward(ctx, p, mask, grad_out, grad_x);
  return cuda::DropoutBackward(ctx, p, mask, grad_out, grad_x);
}

}  // namespace foresight::kernels
