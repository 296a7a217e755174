// GELU (erf and tanh forms) with an optional fused bias: argument checks and
// device dispatch.
#include <string>

#include "check.h"
#include "cpu/transformer_ops.h"
#include "cuda/transformer_ops.h"
#include "foresight/kernels/transformer.h"

namespace foresight::kernels {

const char* GeluFormName(GeluForm f) { return f == GeluForm::kErf ? "erf" : "tanh"; }

namespace {

Status CheckInput(const char* op, const Tensor& x, const Tensor& bias) {
  const std::string o(op);
  FS_RETURN_IF_ERROR(internal::CheckF32(x, (o + ": x").c_str()));
  FS_RETURN_IF_ERROR(CheckDim(x, 2, (o + ": x").c_str()));
  if (bias.defined()) FS_RETURN_IF_ERROR(internal::CheckF32Shape(bias, {x.size(1)}, (o + ": bias").c_str()));
  return Status::OK();
}

}  // namespace

Status Gelu(const ExecContext& ctx, GeluForm form, const Tensor& x, const Tensor& bias, Tensor* out) {
  FS_RETURN_IF_ERROR(CheckInput("Gelu", x, bias));
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, x.shape(), DType::kF32, "Gelu: out"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(x.device(), {&bias, out}, "Gelu"));
  if (x.device().is_cpu()) return cpu::Gelu(ctx, form, x, bias, out);
  return cuda::Gelu(ctx, form, x, bias, out);
}

Status GeluBackward(const ExecContext& ctx, GeluForm form, const Tensor& x, const Tensor& bias,
                    const Tensor& grad_out, Tensor* grad_x) {
  FS_RETURN_IF_ERROR(CheckInput("GeluBackward", x, bias));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(grad_out, x.shape(), "GeluBackward: grad_out"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(grad_x, x.shape(), DType::kF32, "GeluBackward: grad_x"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(x.device(), {&bias, &grad_out, grad_x}, "GeluBackward"));
  if (x.device().is_cpu()) return cpu::GeluBackward(ctx, form, x, bias, grad_out, grad_x);
  return cuda::GeluBackward(ctx, form, x, bias, grad_out, grad_x);
}

}  // namespace foresight::kernels
