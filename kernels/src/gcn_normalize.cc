#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

namespace {

Status CheckBlock(const Csr& csr, const char* op) {
  const std::string what = std::string(op) + ": csr";
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, what.c_str()));
  if (csr.num_src < csr.num_dst()) {
    return InvalidArgument(std::string(op) + ": csr has " + std::to_string(csr.num_dst()) +
                           " destinations but only " + std::to_string(csr.num_src) +
                           " sources; a block's first num_dst sources must be its destinations");
  }
  return Status::OK();
}

}  // namespace

Status GcnNormalize(const ExecContext& ctx, const Csr& csr, Csr* out) {
  if (out == nullptr) return InvalidArgument("GcnNormalize: out is null");
  FS_RETURN_IF_ERROR(CheckBlock(csr, "GcnNormalize"));
  if (csr.device().is_cpu()) return cpu::GcnNormalize(ctx, csr, out);
  return cuda::GcnNormalize(ctx, csr, out);
}

Status GcnOutDegrees(const ExecContext& ctx, const Csr& csr, Tensor* out_degree) {
  if (out_degree == nullptr) return InvalidArgument("GcnOutDegrees: out_degree is null");
  FS_RETURN_IF_ERROR(CheckBlock(csr, "GcnOutDegrees"));
  if (csr.device().is_cpu()) return cpu::GcnOutDegrees(ctx, csr, out_degree);
  return cuda::GcnOutDegrees(ctx, csr, out_degree);
}

Status GcnNormalizeWithOutDegrees(const ExecContext& ctx, const Csr& csr, const Tensor& src_out_degree,
                                  Csr* out) {
  if (out == nullptr) return InvalidArgument("GcnNormalizeWithOutDegrees: out is null");
  FS_RETURN_IF_ERROR(CheckBlock(csr, "GcnNormalizeWithOutDegrees"));
  if (!src_out_degree.defined() || src_out_degree.dtype() != DType::kI64 || src_out_degree.dim() != 1 ||
      src_out_degree.size(0) != csr.num_src || !src_out_degree.is_contiguous()) {
    return InvalidArgument("GcnNormalizeWithOutDegrees: src_out_degree must be a contiguous i64 [" +
                           std::to_string(csr.num_src) + "] (one per source), got " +
                           (src_out_degree.defined() ? std::string(DTypeName(src_out_degree.dtype())) + " " +
                                                           ShapeToString(src_out_degree.shape())
                                                     : std::string("an undefined tensor")));
  }
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(csr.device(), {&src_out_degree}, "GcnNormalizeWithOutDegrees"));
  if (csr.device().is_cpu()) return cpu::GcnNormalizeWithOutDegrees(ctx, csr, src_out_degree, out);
  return cuda::GcnNormalizeWithOutDegrees(ctx, csr, src_out_degree, out);
}

}  // namespace foresight::kernels
