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

Status AddBiasRelu(const ExecContext& ctx, const Tensor& x, const Tensor& bias, Tensor* out) {
  FS_RETURN_IF_ERROR(internal::CheckF32(x, "AddBiasRelu: x"));
  FS_RETURN_IF_ERROR(CheckDim(x, 2, "AddBiasRelu: x"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(bias, {x.size(1)}, "AddBiasRelu: bias"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, x.shape(), DType::kF32, "AddBiasRelu: out"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(x.device(), {&bias, out}, "AddBiasRelu"));
  if (x.device().is_cpu()) return cpu::AddBiasRelu(ctx, x, bias, out);
  return cuda::AddBiasRelu(ctx, x, bias, out);
}

Status ReluBackwardSumRows(const ExecContext& ctx, const Tensor& y, const Tensor& grad_y, Tensor* grad_z,
                           Tensor* grad_bias) {
  FS_RETURN_IF_ERROR(internal::CheckF32(y, "ReluBackwardSumRows: y"));
  FS_RETURN_IF_ERROR(CheckDim(y, 2, "ReluBackwardSumRows: y"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(grad_y, y.shape(), "ReluBackwardSumRows: grad_y"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(grad_z, y.shape(), DType::kF32, "ReluBackwardSumRows: grad_z"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(y.device(), {&grad_y, grad_z}, "ReluBackwardSumRows"));
  if (grad_bias != nullptr) {
    FS_RETURN_IF_ERROR(internal::CheckOutput(grad_bias, {y.size(1)}, DType::kF32, "ReluBackwardSumRows: grad_bias"));
    FS_RETURN_IF_ERROR(internal::CheckOnDevice(y.device(), {grad_bias}, "ReluBackwardSumRows"));
  }
  if (y.device().is_cpu()) return cpu::ReluBackwardSumRows(ctx, y, grad_y, grad_z, grad_bias);
  return cuda::ReluBackwardSumRows(ctx, y, grad_y, grad_z, grad_bias);
}

}  // namespace foresight::kernels
