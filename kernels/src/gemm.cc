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

// op(a) [m, k] times op(b) [k, n] into c [m, n], each a BLAS-ready matrix.
// op names the caller and a_name / b_name / c_name its operands in messages.
Status CheckProduct(const std::string& op, const Tensor& a, bool trans_a, const Tensor& b, bool trans_b,
                    const Tensor* c, const char* a_name, const char* b_name, const char* c_name) {
  if (c == nullptr) return InvalidArgument(op + ": " + c_name + " is null");
  FS_RETURN_IF_ERROR(CheckMatrix(a, (op + ": " + a_name).c_str()));
  FS_RETURN_IF_ERROR(CheckMatrix(b, (op + ": " + b_name).c_str()));
  FS_RETURN_IF_ERROR(CheckMatrix(*c, (op + ": " + c_name).c_str()));
  const int64_t m = trans_a ? a.size(1) : a.size(0);
  const int64_t k = trans_a ? a.size(0) : a.size(1);
  const int64_t kb = trans_b ? b.size(1) : b.size(0);
  const int64_t n = trans_b ? b.size(0) : b.size(1);
  if (k != kb) {
    return InvalidArgument(op + ": inner dimensions differ: op(" + a_name + ") is " + ShapeToString({m, k}) +
                           ", op(" + b_name + ") is " + ShapeToString({kb, n}));
  }
  if (c->size(0) != m || c->size(1) != n) {
    return InvalidArgument(op + ": " + c_name + ": expected shape " + ShapeToString({m, n}) + ", got " +
                           ShapeToString(c->shape()));
  }
  for (const Tensor* t : {&a, &b, c}) {
    if (t->size(0) > INT32_MAX || t->size(1) > INT32_MAX || t->stride(0) > INT32_MAX) {
      return InvalidArgument(op + ": " + ShapeToString(t->shape()) + " exceeds BLAS's 32-bit dimensions");
    }
  }
  return internal::CheckOnDevice(c->device(), {&a, &b}, op.c_str());
}

}  // namespace

Status Gemm(const ExecContext& ctx, const Tensor& a, bool trans_a, const Tensor& b, bool trans_b,
            float alpha, float beta, Tensor* c) {
  FS_RETURN_IF_ERROR(CheckProduct("Gemm", a, trans_a, b, trans_b, c, "a", "b", "c"));
  switch (c->device().type) {
    case DeviceType::kCPU:
      return cpu::Gemm(ctx, a, trans_a, b, trans_b, alpha, beta, c);
    case DeviceType::kCUDA:
      return cuda::Gemm(ctx, a, trans_a, b, trans_b, alpha, beta, c);
    default:
      return internal::NoImplementation("Gemm", c->device());
  }
}

Status GemmBias(const ExecContext& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, bool relu, Tensor* y) {
  FS_RETURN_IF_ERROR(CheckProduct("GemmBias", x, false, w, false, y, "x", "w", "y"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(bias, {y->size(1)}, "GemmBias: bias"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(y->device(), {&bias}, "GemmBias"));
  if (y->data<float>() == x.data<float>() || y->data<float>() == w.data<float>()) {
    return InvalidArgument("GemmBias: y must not alias x or w");
  }
  switch (y->device().type) {
    case DeviceType::kCPU:
      return cpu::GemmBias(ctx, x, w, bias, relu, y);
    case DeviceType::kCUDA:
      return cuda::GemmBias(ctx, x, w, bias, relu, y);
    default:
      return internal::NoImplementation("GemmBias", y->device());
  }
}

Status GemmReluBackward(const ExecContext& ctx, const Tensor& grad_y, const Tensor& w, const Tensor& y,
                        Tensor* grad_z, Tensor* grad_bias) {
  FS_RETURN_IF_ERROR(CheckProduct("GemmReluBackward", grad_y, false, w, true, grad_z, "grad_y", "w", "grad_z"));
  FS_RETURN_IF_ERROR(internal::CheckOutput(grad_z, grad_z->shape(), DType::kF32, "GemmReluBackward: grad_z"));
  FS_RETURN_IF_ERROR(internal::CheckF32Shape(y, grad_z->shape(), "GemmReluBackward: y"));
  FS_RETURN_IF_ERROR(internal::CheckOnDevice(grad_z->device(), {&y}, "GemmReluBackward"));
  if (grad_bias != nullptr) {
    FS_RETURN_IF_ERROR(
        internal::CheckOutput(grad_bias, {grad_z->size(1)}, DType::kF32, "GemmReluBackward: grad_bias"));
    FS_RETURN_IF_ERROR(internal::CheckOnDevice(grad_z->device(), {grad_bias}, "GemmReluBackward"));
  }
  const float* z = grad_z->data<float>();
  if (z == grad_y.data<float>() || z == w.data<float>() || z == y.data<float>()) {
    return InvalidArgument("GemmReluBackward: grad_z must not alias grad_y, w or y");
  }
  switch (grad_z->device().type) {
    case DeviceType::kCPU:
      return cpu::GemmReluBackward(ctx, grad_y, w, y, grad_z, grad_bias);
    case DeviceType::kCUDA:
      return cuda::GemmReluBackward(ctx, grad_y, w, y, grad_z, grad_bias);
    default:
      return internal::NoImplementation("GemmReluBackward", grad_z->device());
  }
}

}  // namespace foresight::kernels
