// LayerNorm fused with bias and residual add: argument checks and device
// dispatch.
#include <string>

#include "check.h"
#include "cpu/transformer_ops.h"
#include "cuda/transformer_ops.h"
#include "foresight/kernels/transformer.h"

namespace foresight::kernels {

Status LayerNorm(const ExecContext& ctx, const Tensor& x, const Tensor& bias, const Tensor& residual,
                 const Tensor& gamma, const Tensor& beta, float eps, Tensor* sum, Tensor* out, Tensor* mean,
                 Tensor* rstd) {
  FS_RETURN_IF_ERROR(internal::CheckF32(x, "LayerNorm: x"));
  FS_RETURN_IF_ERROR(CheckDim(x, 2, "LayerNorm: x"));
  const int64_t t = x.size(0), e = x.size(1);
  if (e == 0) return InvalidArgument("LayerNorm: x has no columns");
  if (!(eps > 0.0f)) return InvalidArgument("LayerNorm: eps must be positive, got " + std::to_string(eps));
  if (bias.defined()) FS_RETURN_IF_ERROR(internal::CheckF32Shape(bias, {e}, "LayerNorm: bias"));
  if (residual.defined()) FS_RETURN_IF_ERROR(internal::CheckF32Shape(residual, {t, e}, "LayerNorm: residual"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(gamma, {e}, "LayerNorm: gamma"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(beta, {e}, "LayerNorm: beta"));
  if (sum != nullptr) FS_RETURN_IF_ERROR(internal::CheckOutput(sum, {t, e}, DType::kF32, "LayerNorm: sum"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, {t, e}, DType::kF32, "LayerNorm: out"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(mean, {t}, DType::kF32, "LayerNorm: mean"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(rstd, {t}, DType::kF32, "LayerNorm: rstd"));
  FS_RETURN_IF_ERROR(
      internal::CheckOnDevice(x.device(), {&bias, &residual, &gamma, &beta, sum, out, mean, rstd}, "LayerNorm"));
  if (x.device().is_cpu()) return cpu::LayerNorm(ctx, x, bias, residual, gamma, beta, eps, sum, out, mean, rstd);
  return cuda::LayerNorm(ctx, x, bias, residual, gamma, beta, eps, sum, out, mean, rstd);
}

Status LayerNormBackward(const ExecContext& ctx, const Tensor& h, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, const Tensor& grad_out, Tensor* grad_h, Tensor* grad_gamma,
                         Tensor* grad_beta) {
  FS_RETURN_IF_ERROR(internal::CheckF32(h, "LayerNormBackward: h"));
  FS_RETURN_IF_ERROR(CheckDim(h, 2, "LayerNormBackward: h"));
  const int64_t t = h.size(0), e = h.size(1);
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(gamma, {e}, "LayerNormBackward: gamma"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(mean, {t}, "LayerNormBackward: mean"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(rstd, {t}, "LayerNormBackward: rstd"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(grad_out, {t, e}, "LayerNormBackward: grad_out"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(grad_h, {t, e}, DType::kF32, "LayerNormBackward: grad_h"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(grad_gamma, {e}, DType::kF32, "LayerNormBackward: grad_gamma"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(grad_beta, {e}, DType::kF32, "LayerNormBackward: grad_beta"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(h.device(), {&gamma, &mean, &rstd, &grad_out, grad_h, grad_gamma, grad_beta},
                                             "LayerNormBackward"));
  if (h.device().is_cpu()) {
    return cpu::LayerNormBackward(ctx, h, gamma, mean, rstd, grad_out, grad_h, grad_gamma, grad_beta);
  }
  return cuda::LayerNormBackward(ctx, h, gamma, mean, rstd, grad_out, grad_h, grad_gamma, grad_beta);
}

}  // namespace foresight::kernels
