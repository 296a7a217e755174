#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

namespace {

// An f32 contiguous [rows, heads] tensor; heads < 0 accepts any.
Status CheckHeads(const Tensor& t, int64_t rows, int64_t heads, const char* what) {
  FS_RETURN_IF_ERROR(internal::CheckF32(t, what));
  FS_RETURN_IF_ERROR(CheckDim(t, 2, what));
  return CheckShape(t, {rows, heads < 0 ? t.size(1) : heads}, what);
}

}  // namespace

Status GatEdgeScores(const ExecContext& ctx, const Csr& csr, const Tensor& el, const Tensor& er,
                     float slope, Tensor* scores) {
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, "GatEdgeScores: csr"));
  FS_RETURN_IF_ERROR(CheckHeads(el, csr.num_src, -1, "GatEdgeScores: el"));
  const int64_t h = el.size(1);
  FS_RETURN_IF_ERROR(CheckHeads(er, csr.num_dst(), h, "GatEdgeScores: er"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(scores, {csr.num_edges(), h}, DType::kF32, "GatEdgeScores: scores"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(csr.device(), {&el, &er, scores}, "GatEdgeScores"));
  if (csr.device().is_cpu()) return cpu::GatEdgeScores(ctx, csr, el, er, slope, scores);
  return cuda::GatEdgeScores(ctx, csr, el, er, slope, scores);
}

Status GatEdgeScoresBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t,
                             const Tensor& edge_perm, const Tensor& el, const Tensor& er, float slope,
                             const Tensor& grad_scores, Tensor* grad_el, Tensor* grad_er) {
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, "GatEdgeScoresBackward: csr"));
  FS_RETURN_IF_ERROR(internal::CheckTranspose("GatEdgeScoresBackward", csr, csr_t, &edge_perm));
  FS_RETURN_IF_ERROR(CheckHeads(el, csr.num_src, -1, "GatEdgeScoresBackward: el"));
  const int64_t h = el.size(1);
  FS_RETURN_IF_ERROR(CheckHeads(er, csr.num_dst(), h, "GatEdgeScoresBackward: er"));
  FS_RETURN_IF_ERROR(CheckHeads(grad_scores, csr.num_edges(), h, "GatEdgeScoresBackward: grad_scores"));
  if (grad_el != nullptr) {
    FS_RETURN_IF_ERROR(internal::CheckOutput(grad_el, el.shape(), DType::kF32, "GatEdgeScoresBackward: grad_el"));
  }
  if (grad_er != nullptr) {
    FS_RETURN_IF_ERROR(internal::CheckOutput(grad_er, er.shape(), DType::kF32, "GatEdgeScoresBackward: grad_er"));
  }
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(csr.device(), {&el, &er, &grad_scores, grad_el, grad_er},
                                             "GatEdgeScoresBackward"));
  if (csr.device().is_cpu()) {
    return cpu::GatEdgeScoresBackward(ctx, csr, csr_t, edge_perm, el, er, slope, grad_scores, grad_el, grad_er);
  }
  return cuda::GatEdgeScoresBackward(ctx, csr, csr_t, edge_perm, el, er, slope, grad_scores, grad_el, grad_er);
}

Status EdgeSoftmax(const ExecContext& ctx, const Csr& csr, const Tensor& scores, Tensor* out) {
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, "EdgeSoftmax: csr"));
  FS_RETURN_IF_ERROR(CheckHeads(scores, csr.num_edges(), -1, "EdgeSoftmax: scores"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, scores.shape(), DType::kF32, "EdgeSoftmax: out"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(csr.device(), {&scores, out}, "EdgeSoftmax"));
  if (csr.device().is_cpu()) return cpu::EdgeSoftmax(ctx, csr, scores, out);
  return cuda::EdgeSoftmax(ctx, csr, scores, out);
}

Status EdgeSoftmaxBackward(const ExecContext& ctx, const Csr& csr, const Tensor& out,
                           const Tensor& grad_out, Tensor* grad_scores) {
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, "EdgeSoftmaxBackward: csr"));
  FS_RETURN_IF_ERROR(CheckHeads(out, csr.num_edges(), -1, "EdgeSoftmaxBackward: out"));
  FS_RETURN_IF_ERROR(CheckHeads(grad_out, csr.num_edges(), out.size(1), "EdgeSoftmaxBackward: grad_out"));
  FS_RETURN_IF_ERROR(
      internal::CheckOutput(grad_scores, out.shape(), DType::kF32, "EdgeSoftmaxBackward: grad_scores"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(csr.device(), {&out, &grad_out, grad_scores}, "EdgeSoftmaxBackward"));
  if (csr.device().is_cpu()) return cpu::EdgeSoftmaxBackward(ctx, csr, out, grad_out, grad_scores);
  return cuda::EdgeSoftmaxBackward(ctx, csr, out, grad_out, grad_scores);
}

Status SpmmEdgeHeads(const ExecContext& ctx, const Csr& csr, const Tensor& alpha, const Tensor& x,
                     Tensor* out) {
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, "SpmmEdgeHeads: csr"));
  FS_RETURN_IF_ERROR(CheckHeads(alpha, csr.num_edges(), -1, "SpmmEdgeHeads: alpha"));
  const int64_t h = alpha.size(1);
  FS_RETURN_IF_ERROR(internal::CheckF32(x, "SpmmEdgeHeads: x"));
  FS_RETURN_IF_ERROR(CheckDim(x, 3, "SpmmEdgeHeads: x"));
  FS_RETURN_IF_ERROR(CheckShape(x, {csr.num_src, h, x.size(2)}, "SpmmEdgeHeads: x"));
  FS_RETURN_IF_ERROR(
      internal::CheckOutput(out, {csr.num_dst(), h, x.size(2)}, DType::kF32, "SpmmEdgeHeads: out"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(csr.device(), {&alpha, &x, out}, "SpmmEdgeHeads"));
  if (csr.device().is_cpu()) return cpu::SpmmEdgeHeads(ctx, csr, alpha, x, out);
  return cuda::SpmmEdgeHeads(ctx, csr, alpha, x, out);
}

Status SpmmEdgeHeadsBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t,
                             const Tensor& edge_perm, const Tensor& alpha, const Tensor& x,
                             const Tensor& grad_out, Tensor* grad_alpha, Tensor* grad_x) {
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, "SpmmEdgeHeadsBackward: csr"));
  FS_RETURN_IF_ERROR(internal::CheckTranspose("SpmmEdgeHeadsBackward", csr, csr_t, &edge_perm));
  FS_RETURN_IF_ERROR(CheckHeads(alpha, csr.num_edges(), -1, "SpmmEdgeHeadsBackward: alpha"));
  const int64_t h = alpha.size(1);
  FS_RETURN_IF_ERROR(internal::CheckF32(x, "SpmmEdgeHeadsBackward: x"));
  FS_RETURN_IF_ERROR(CheckDim(x, 3, "SpmmEdgeHeadsBackward: x"));
  FS_RETURN_IF_ERROR(CheckShape(x, {csr.num_src, h, x.size(2)}, "SpmmEdgeHeadsBackward: x"));
  FS_RETURN_IF_ERROR(
      internal::CheckF32Shape(grad_out, {csr.num_dst(), h, x.size(2)}, "SpmmEdgeHeadsBackward: grad_out"));
  if (grad_alpha != nullptr) {
    FS_RETURN_IF_ERROR(
        internal::CheckOutput(grad_alpha, alpha.shape(), DType::kF32, "SpmmEdgeHeadsBackward: grad_alpha"));
  }
  if (grad_x != nullptr) {
    FS_RETURN_IF_ERROR(internal::CheckOutput(grad_x, x.shape(), DType::kF32, "SpmmEdgeHeadsBackward: grad_x"));
  }
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(csr.device(), {&alpha, &x, &grad_out, grad_alpha, grad_x},
                                             "SpmmEdgeHeadsBackward"));
  if (csr.device().is_cpu()) {
    return cpu::SpmmEdgeHeadsBackward(ctx, csr, csr_t, edge_perm, alpha, x, grad_out, grad_alpha, grad_x);
  }
  return cuda::SpmmEdgeHeadsBackward(ctx, csr, csr_t, edge_perm, alpha, x, grad_out, grad_alpha, grad_x);
}

}  // namespace foresight::kernels
