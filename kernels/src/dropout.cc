#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"
#include "keyed_dropout_ops.h"

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

// DropoutRows and ReluDropoutRows: the same checks, then the backend's
// keyed kernel with or without ReLU's test.
Status KeyedDropout(const char* op, const ExecContext& ctx, float p, const Tensor& x, const Tensor& row_ids,
                    Tensor* out, Tensor* mask, bool relu) {
  const std::string name(op);
  FS_RETURN_IF_ERROR(CheckP(op, p));
  FS_RETURN_IF_ERROR(internal::CheckF32(x, (name + ": x").c_str()));
  if (x.dim() < 1) return InvalidArgument(name + ": x must have rows, got " + x.ToString());
  FS_RETURN_IF_ERROR(CheckDType(row_ids, DType::kI64, (name + ": row_ids").c_str()));
  FS_RETURN_IF_ERROR(CheckContiguous(row_ids, (name + ": row_ids").c_str()));
  if (row_ids.dim() != 1 || row_ids.size(0) != x.size(0)) {
    return InvalidArgument(name + ": row_ids must be 1-D with one id per row of x " + ShapeToString(x.shape()) +
                           ", got " + row_ids.ToString());
  }
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, x.shape(), DType::kF32, (name + ": out").c_str()));
  if (mask != nullptr) FS_RETURN_IF_ERROR(CheckMask(op, *mask, x.numel()));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(x.device(), {&row_ids, out, mask}, op));
  if (x.numel() == 0) return Status::OK();
  if (x.device().is_cpu()) return cpu::DropoutRows(ctx, p, x, row_ids, out, mask, relu);
  return cuda::DropoutRows(ctx, p, x, row_ids, out, mask, relu);
}

Status DropoutRows(const ExecContext& ctx, float p, const Tensor& x, const Tensor& row_ids, Tensor* out,
                   Tensor* mask) {
  return KeyedDropout("DropoutRows", ctx, p, x, row_ids, out, mask, /*relu=*/false);
}

Status ReluDropoutRows(const ExecContext& ctx, float p, const Tensor& x, const Tensor& row_ids, Tensor* out,
                       Tensor* mask) {
  return KeyedDropout("ReluDropoutRows", ctx, p, x, row_ids, out, mask, /*relu=*/true);
}

Status GatherRowsDropout(const ExecContext& ctx, float p, const Tensor& src, const Tensor& ids, Tensor* out) {
  FS_RETURN_IF_ERROR(CheckP("GatherRowsDropout", p));
  FS_RETURN_IF_ERROR(CheckDefined(src, "GatherRowsDropout: src"));
  if (!IsFloating(src.dtype()) || src.dim() != 2) {
    return InvalidArgument("GatherRowsDropout: src: expected an f32, f16 or bf16 matrix, got " + src.ToString());
  }
  FS_RETURN_IF_ERROR(CheckContiguous(src, "GatherRowsDropout: src"));
  FS_RETURN_IF_ERROR(internal::CheckIds(ids, "GatherRowsDropout: ids"));
  if (out == nullptr) return InvalidArgument("GatherRowsDropout: out is null");
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, {ids.size(0), src.size(1)}, DType::kF32, "GatherRowsDropout: out"));
  if (!src.device().is_cpu() || !ids.device().is_cpu() || !out->device().is_cpu()) {
    return InvalidArgument("GatherRowsDropout: runs on host tensors only (the input pipeline's rows), got src on " +
                           src.device().ToString() + ", ids on " + ids.device().ToString() + ", out on " +
                           out->device().ToString());
  }
  return cpu::GatherRowsDropout(ctx, p, src, ids, out);
}

Status DropoutEdgeKeys(const ExecContext& ctx, const Csr& csr, const Tensor& src_ids, Tensor* keys) {
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, "DropoutEdgeKeys: csr"));
  if (keys == nullptr) return InvalidArgument("DropoutEdgeKeys: keys is null");
  FS_RETURN_IF_ERROR(CheckDType(src_ids, DType::kI64, "DropoutEdgeKeys: src_ids"));
  FS_RETURN_IF_ERROR(CheckContiguous(src_ids, "DropoutEdgeKeys: src_ids"));
  if (src_ids.dim() != 1 || src_ids.size(0) < csr.num_src || csr.num_dst() > csr.num_src) {
    return InvalidArgument("DropoutEdgeKeys: src_ids " + src_ids.ToString() + " must give an id to each of the " +
                           std::to_string(csr.num_src) + " sources of a block with " +
                           std::to_string(csr.num_dst()) + " destinations");
  }
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(csr.device(), {&src_ids}, "DropoutEdgeKeys"));
  FS_ASSIGN_OR_RETURN(*keys, Tensor::EmptyOn(csr.device(), {csr.num_edges()}, DType::kI64));
  if (csr.num_edges() == 0) return Status::OK();
  if (csr.device().is_cpu()) return cpu::DropoutEdgeKeys(ctx, csr, src_ids, keys);
  return cuda::DropoutEdgeKeys(ctx, csr, src_ids, keys);
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
