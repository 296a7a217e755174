#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

namespace {

Status CheckLabels(const char* op, const Tensor& labels, int64_t n) {
  const std::string what = std::string(op) + ": labels";
  FS_RETURN_IF_ERROR(internal::CheckIds(labels, what.c_str()));
  if (labels.size(0) != n) {
    return InvalidArgument(what + ": expected " + std::to_string(n) + " labels (one per row), got " +
                           std::to_string(labels.size(0)));
  }
  return Status::OK();
}

}  // namespace

Status LogSoftmax(const ExecContext& ctx, const Tensor& logits, Tensor* out) {
  FS_RETURN_IF_ERROR(internal::CheckF32(logits, "LogSoftmax: logits"));
  FS_RETURN_IF_ERROR(CheckDim(logits, 2, "LogSoftmax: logits"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, logits.shape(), DType::kF32, "LogSoftmax: out"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(logits.device(), {out}, "LogSoftmax"));
  if (logits.device().is_cpu()) return cpu::LogSoftmax(ctx, logits, out);
  return cuda::LogSoftmax(ctx, logits, out);
}

Status LogSoftmaxBackward(const ExecContext& ctx, const Tensor& out, const Tensor& grad_out,
                          Tensor* grad_logits) {
  FS_RETURN_IF_ERROR(internal::CheckF32(out, "LogSoftmaxBackward: out"));
  FS_RETURN_IF_ERROR(CheckDim(out, 2, "LogSoftmaxBackward: out"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(grad_out, out.shape(), "LogSoftmaxBackward: grad_out"));
  FS_RETURN_IF_ERROR(
      internal::CheckOutput(grad_logits, out.shape(), DType::kF32, "LogSoftmaxBackward: grad_logits"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(out.device(), {&grad_out, grad_logits}, "LogSoftmaxBackward"));
  if (out.device().is_cpu()) return cpu::LogSoftmaxBackward(ctx, out, grad_out, grad_logits);
  return cuda::LogSoftmaxBackward(ctx, out, grad_out, grad_logits);
}

Status NllLoss(const ExecContext& ctx, const Tensor& logp, const Tensor& labels, float* loss,
               Tensor* grad_logp) {
  if (loss == nullptr) return InvalidArgument("NllLoss: loss is null");
  FS_RETURN_IF_ERROR(internal::CheckF32(logp, "NllLoss: logp"));
  FS_RETURN_IF_ERROR(CheckDim(logp, 2, "NllLoss: logp"));
  FS_RETURN_IF_ERROR(CheckLabels("NllLoss", labels, logp.size(0)));
  if (grad_logp != nullptr) {
    FS_RETURN_IF_ERROR(internal::CheckOutput(grad_logp, logp.shape(), DType::kF32, "NllLoss: grad_logp"));
  }
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(logp.device(), {&labels, grad_logp}, "NllLoss"));
  if (logp.device().is_cpu()) return cpu::NllLoss(ctx, logp, labels, loss, grad_logp);
  return cuda::NllLoss(ctx, logp, labels, loss, grad_logp);
}

Status Accuracy(const ExecContext& ctx, const Tensor& scores, const Tensor& labels, int64_t* correct,
                int64_t* counted) {
  if (correct == nullptr || counted == nullptr) return InvalidArgument("Accuracy: correct or counted is null");
  FS_RETURN_IF_ERROR(internal::CheckF32(scores, "Accuracy: scores"));
  FS_RETURN_IF_ERROR(CheckDim(scores, 2, "Accuracy: scores"));
  FS_RETURN_IF_ERROR(CheckLabels("Accuracy", labels, scores.size(0)));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(scores.device(), {&labels}, "Accuracy"));
  if (scores.device().is_cpu()) return cpu::Accuracy(ctx, scores, labels, correct, counted);
  return cuda::Accuracy(ctx, scores, labels, correct, counted);
}

}  // namespace foresight::kernels
