#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

namespace {

// a, b and *out: f32, contiguous, one shape, one device.
Status CheckBinary(const char* op, const Tensor& a, const Tensor& b, const Tensor* out) {
  const std::string o(op);
  FS_RETURN_IF_ERROR(internal::CheckF32(a, (o + ": a").c_str()));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(b, a.shape(), (o + ": b").c_str()));
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, a.shape(), DType::kF32, (o + ": out").c_str()));
  return internal::CheckOnDevice(a.device(), {&b, out}, op);
}

Status CheckUnary(const char* op, const Tensor& a, const Tensor* out) {
  const std::string o(op);
  FS_RETURN_IF_ERROR(internal::CheckF32(a, (o + ": a").c_str()));
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, a.shape(), DType::kF32, (o + ": out").c_str()));
  return internal::CheckOnDevice(a.device(), {out}, op);
}

}  // namespace

Status Add(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* out) {
  FS_RETURN_IF_ERROR(CheckBinary("Add", a, b, out));
  if (a.device().is_cpu()) return cpu::Add(ctx, a, b, out);
  return cuda::Add(ctx, a, b, out);
}

Status Axpby(const ExecContext& ctx, float alpha, const Tensor& a, float beta, const Tensor& b, Tensor* out) {
  FS_RETURN_IF_ERROR(CheckBinary("Axpby", a, b, out));
  if (a.device().is_cpu()) return cpu::Axpby(ctx, alpha, a, beta, b, out);
  return cuda::Axpby(ctx, alpha, a, beta, b, out);
}

Status Mul(const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* out) {
  FS_RETURN_IF_ERROR(CheckBinary("Mul", a, b, out));
  if (a.device().is_cpu()) return cpu::Mul(ctx, a, b, out);
  return cuda::Mul(ctx, a, b, out);
}

Status Scale(const ExecContext& ctx, const Tensor& a, float alpha, Tensor* out) {
  FS_RETURN_IF_ERROR(CheckUnary("Scale", a, out));
  if (a.device().is_cpu()) return cpu::Scale(ctx, a, alpha, out);
  return cuda::Scale(ctx, a, alpha, out);
}

Status AddBias(const ExecContext& ctx, const Tensor& x, const Tensor& bias, Tensor* out) {
  FS_RETURN_IF_ERROR(internal::CheckF32(x, "AddBias: x"));
  FS_RETURN_IF_ERROR(CheckDim(x, 2, "AddBias: x"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(bias, {x.size(1)}, "AddBias: bias"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, x.shape(), DType::kF32, "AddBias: out"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(x.device(), {&bias, out}, "AddBias"));
  if (x.device().is_cpu()) return cpu::AddBias(ctx, x, bias, out);
  return cuda::AddBias(ctx, x, bias, out);
}

Status SumRows(const ExecContext& ctx, const Tensor& grad, Tensor* grad_bias) {
  FS_RETURN_IF_ERROR(internal::CheckF32(grad, "SumRows: grad"));
  FS_RETURN_IF_ERROR(CheckDim(grad, 2, "SumRows: grad"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(grad_bias, {grad.size(1)}, DType::kF32, "SumRows: grad_bias"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(grad.device(), {grad_bias}, "SumRows"));
  if (grad.device().is_cpu()) return cpu::SumRows(ctx, grad, grad_bias);
  return cuda::SumRows(ctx, grad, grad_bias);
}

}  // namespace foresight::kernels
