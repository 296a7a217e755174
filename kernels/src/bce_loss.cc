// BceWithLogits: argument checks and the device dispatch.
#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

Status BceWithLogits(const ExecContext& ctx, const Tensor& logits, const Tensor& targets, float* loss,
                     Tensor* grad_logits) {
  if (loss == nullptr) return InvalidArgument("BceWithLogits: loss is null");
  FS_RETURN_IF_ERROR(internal::CheckF32(logits, "BceWithLogits: logits"));
  FS_RETURN_IF_ERROR(internal::CheckF32(targets, "BceWithLogits: targets"));
  if (targets.numel() != logits.numel()) {
    return InvalidArgument("BceWithLogits: " + std::to_string(targets.numel()) + " targets for " +
                           std::to_string(logits.numel()) + " logits (one each expected)");
  }
  if (grad_logits != nullptr) {
    FS_RETURN_IF_ERROR(
        internal::CheckOutput(grad_logits, logits.shape(), DType::kF32, "BceWithLogits: grad_logits"));
  }
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(logits.device(), {&targets, grad_logits}, "BceWithLogits"));
  if (logits.device().is_cpu()) return cpu::BceWithLogits(ctx, logits, targets, loss, grad_logits);
  return cuda::BceWithLogits(ctx, logits, targets, loss, grad_logits);
}

}  // namespace foresight::kernels
