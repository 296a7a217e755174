#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

namespace {

// Shape of rows of `t` beyond the first dimension, with `rows` in front.
Shape RowsShape(const Tensor& t, int64_t rows) {
  Shape s = t.shape();
  s[0] = rows;
  return s;
}

}  // namespace

Status GatherRows(const ExecContext& ctx, const Tensor& src, const Tensor& ids, Tensor* out) {
  FS_RETURN_IF_ERROR(CheckDefined(src, "GatherRows: src"));
  if (!IsFloating(src.dtype())) {
    return InvalidArgument(std::string("GatherRows: src: expected dtype f32, f16 or bf16, got ") +
                           DTypeName(src.dtype()));
  }
  FS_RETURN_IF_ERROR(CheckContiguous(src, "GatherRows: src"));
  if (src.dim() < 1) return InvalidArgument("GatherRows: src: expected at least 1 dimension, got a scalar");
  FS_RETURN_IF_ERROR(internal::CheckIds(ids, "GatherRows: ids"));
  if (out == nullptr) return InvalidArgument("GatherRows: out is null");
  FS_RETURN_IF_ERROR(CheckDefined(*out, "GatherRows: out"));
  if (out->dtype() != DType::kF32 && out->dtype() != src.dtype()) {
    return InvalidArgument(std::string("GatherRows: out: expected dtype f32 or ") + DTypeName(src.dtype()) +
                           " (the dtype of src), got " + DTypeName(out->dtype()));
  }
  FS_RETURN_IF_ERROR(internal::CheckOutput(out, RowsShape(src, ids.size(0)), out->dtype(), "GatherRows: out"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(src.device(), {&ids, out}, "GatherRows"));
  if (src.device().is_cpu()) return cpu::GatherRows(ctx, src, ids, out);
  return cuda::GatherRows(ctx, src, ids, out);
}

Status IndexAddRows(const ExecContext& ctx, const Tensor& src, const Tensor& ids, Tensor* dst) {
  FS_RETURN_IF_ERROR(internal::CheckF32(src, "IndexAddRows: src"));
  if (src.dim() < 1) return InvalidArgument("IndexAddRows: src: expected at least 1 dimension, got a scalar");
  FS_RETURN_IF_ERROR(internal::CheckIds(ids, "IndexAddRows: ids"));
  if (ids.size(0) != src.size(0)) {
    return InvalidArgument("IndexAddRows: ids: expected " + std::to_string(src.size(0)) +
                           " ids (one per row of src), got " + std::to_string(ids.size(0)));
  }
  if (dst == nullptr) return InvalidArgument("IndexAddRows: dst is null");
  FS_RETURN_IF_ERROR(internal::CheckF32(*dst, "IndexAddRows: dst"));
  if (dst->dim() != src.dim()) {
    return InvalidArgument("IndexAddRows: dst: expected " + std::to_string(src.dim()) +
                           " dimensions (like src " + ShapeToString(src.shape()) + "), got " +
                           ShapeToString(dst->shape()));
  }
  FS_RETURN_IF_ERROR(internal::CheckOutput(dst, RowsShape(src, dst->size(0)), DType::kF32, "IndexAddRows: dst"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(src.device(), {&ids, dst}, "IndexAddRows"));
  if (src.device().is_cpu()) return cpu::IndexAddRows(ctx, src, ids, dst);
  return cuda::IndexAddRows(ctx, src, ids, dst);
}

}  // namespace foresight::kernels
