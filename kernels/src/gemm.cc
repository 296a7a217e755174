#include <cstdint>
#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

namespace {

// A row-major f32 matrix whose rows may be strided (a view of rows), but
// whose elements within a row are contiguous, as BLAS needs.
Status CheckMatrix(const Tensor& t, const char* what) {
  FS_RETURN_IF_ERROR(CheckDType(t, DType::kF32, what));
  FS_RETURN_IF_ERROR(CheckDim(t, 2, what));
  if (t.size(1) > 1 && t.stride(1) != 1) {
    return InvalidArgument(std::string(what) + ": expected unit stride along columns, got stride " +
                           std::to_string(t.stride(1)));
  }
  if (t.size(0) > 1 && t.stride(0) < t.size(1)) {
    return InvalidArgument(std::string(what) + ": row stride " + std::to_string(t.stride(0)) +
                           " is smaller than the row length " + std::to_string(t.size(1)));
  }
  return Status::OK();
}

}  // namespace

Status Gemm(const ExecContext& ctx, const Tensor& a, bool trans_a, const Tensor& b, bool trans_b,
            float alpha, float beta, Tensor* c) {
  if (c == nullptr) return InvalidArgument("Gemm: c is null");
  FS_RETURN_IF_ERROR(CheckMatrix(a, "Gemm: a"));
  FS_RETURN_IF_ERROR(CheckMatrix(b, "Gemm: b"));
  FS_RETURN_IF_ERROR(CheckMatrix(*c, "Gemm: c"));
  const int64_t m = trans_a ? a.size(1) : a.size(0);
  const int64_t k = trans_a ? a.size(0) : a.size(1);
  const int64_t kb = trans_b ? b.size(1) : b.size(0);
  const int64_t n = trans_b ? b.size(0) : b.size(1);
  if (k != kb) {
    return InvalidArgument("Gemm: inner dimensions differ: op(a) is " + ShapeToString({m, k}) +
                           ", op(b) is " + ShapeToString({kb, n}));
  }
  if (c->size(0) != m || c->size(1) != n) {
    return InvalidArgument("Gemm: c: expected shape " + ShapeToString({m, n}) + ", got " +
                           ShapeToString(c->shape()));
  }
  for (const Tensor* t : {&a, &b, static_cast<const Tensor*>(c)}) {
    if (t->size(0) > INT32_MAX || t->size(1) > INT32_MAX || t->stride(0) > INT32_MAX) {
      return InvalidArgument("Gemm: " + ShapeToString(t->shape()) + " exceeds BLAS's 32-bit dimensions");
    }
  }
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(c->device(), {&a, &b}, "Gemm"));
  switch (c->device().type) {
    case DeviceType::kCPU:
      return cpu::Gemm(ctx, a, trans_a, b, trans_b, alpha, beta, c);
    case DeviceType::kCUDA:
      return cuda::Gemm(ctx, a, trans_a, b, trans_b, alpha, beta, c);
    default:
      return internal::NoImplementation("Gemm", c->device());
  }
}

}  // namespace foresight::kernels
