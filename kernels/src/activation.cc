#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

Status Activate(const ExecContext& ctx, Activation act, float param, const Tensor& x, Tensor* out) {
  FS_RETURN_IF_ERROR(internal::CheckF32(x, "Activate: x"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, x.shape(), DType::kF32, "Activate: out"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(x.device(), {out}, "Activate"));
  if (x.device().is_cpu()) return cpu::Activate(ctx, act, param, x, out);
  return cuda::Activate(ctx, act, param, x, out);
}

Status ActivateBackward(const ExecContext& ctx, Activation act, float param, const Tensor& x,
                        const Tensor& grad_out, Tensor* grad_x) {
  FS_RETURN_IF_ERROR(internal::CheckF32(x, "ActivateBackward: x"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(grad_out, x.shape(), "ActivateBackward: grad_out"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(grad_x, x.shape(), DType::kF32, "ActivateBackward: grad_x"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(x.device(), {&grad_out, grad_x}, "ActivateBackward"));
  if (x.device().is_cpu()) return cpu::ActivateBackward(ctx, act, param, x, grad_out, grad_x);
  return cuda::ActivateBackward(ctx, act, param, x, grad_out, grad_x);
}

}  // namespace foresight::kernels
