// GEMM on CUDA through cuBLAS. The row-major product c = op(a) op(b) is
// cuBLAS's column-major c^T = op(b)^T op(a)^T, so the operands are passed
// swapped, with no copies. f32 by default; ctx.allow_tf32 lets cuBLAS use
// TF32 tensor cores (inputs rounded to a 10-bit mantissa, f32
// accumulation). The summation order is cuBLAS's, not OpenBLAS's: results
// agree with the CPU to f32 rounding of a k-term sum, not bit for bit.
// cuBLAS is opened on the first such GEMM (cublas_library.h), not linked.
#include <map>
#include <string>

#include "cublas_library.h"
#include "cuda_ops.h"
#include "cuda_util.cuh"

namespace foresight::kernels::cuda {

namespace {

Status CublasCheck(const CublasLibrary& lib, const char* what, cublasStatus_t st) {
  if (st == CUBLAS_STATUS_SUCCESS) return Status::OK();
  return Internal(std::string(what) + " failed: " + lib.status_string(st));
}

// One handle per (thread, GPU): a handle's stream and math mode are set
// per call, which is safe only when no other thread shares it.
StatusOr<cublasHandle_t> Handle(const CublasLibrary& lib, int device) {
  thread_local std::map<int, cublasHandle_t> handles;
  auto it = handles.find(device);
  if (it != handles.end()) return it->second;
  cublasHandle_t h = nullptr;
  FS_RETURN_IF_ERROR(CublasCheck(lib, "cublasCreate", lib.create(&h)));
  handles[device] = h;
  return h;
}

int64_t LeadingDim(const Tensor& t) {
  const int64_t cols = std::max<int64_t>(1, t.size(1));
  return t.size(0) > 1 ? std::max(t.stride(0), cols) : cols;
}

// k == 0: c = beta * c, and beta == 0 overwrites (NaNs do not survive), as
// the CPU does.
__global__ void ScaleRowsKernel(float* c, int64_t m, int64_t n, int64_t ldc, float beta) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= m * n) return;
  float* p = c + (t / n) * ldc + t % n;
  *p = beta == 0.0f ? 0.0f : __fmul_rn(*p, beta);
}

}  // namespace

Status Gemm(const ExecContext& ctx, const Tensor& a, bool trans_a, const Tensor& b, bool trans_b,
            float alpha, float beta, Tensor* c) {
  const int64_t m = c->size(0), n = c->size(1);
  const int64_t k = trans_a ? a.size(0) : a.size(1);
  if (m == 0 || n == 0) return Status::OK();
  const Device dev = c->device();
  FS_ASSIGN_OR_RETURN(cudaStream_t s, StreamOf(ctx, dev));
  const int64_t ldc = LeadingDim(*c);
  if (k == 0) {
    ScaleRowsKernel<<<Blocks(m * n, kThreads), kThreads, 0, s>>>(c->data<float>(), m, n, ldc, beta);
    return LaunchCheck("ScaleRowsKernel");
  }
  FS_ASSIGN_OR_RETURN(const CublasLibrary* lib, Cublas());
  FS_ASSIGN_OR_RETURN(cublasHandle_t h, Handle(*lib, dev.index));
  FS_RETURN_IF_ERROR(CublasCheck(*lib, "cublasSetStream", lib->set_stream(h, s)));
  FS_RETURN_IF_ERROR(CublasCheck(*lib, "cublasSetMathMode",
                                 lib->set_math_mode(h, ctx.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                      : CUBLAS_DEFAULT_MATH)));
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  return CublasCheck(*lib, "cublasSgemm",
                     lib->sgemm(h, op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha,
                                 b.data<float>(), static_cast<int>(LeadingDim(b)), a.data<float>(),
                                 static_cast<int>(LeadingDim(a)), &beta, c->data<float>(), static_cast<int>(ldc)));
}

// The CPU adds the bias on each tile of y as it leaves BLAS; here cuBLAS's
// product, then the two kernels the CPU's epilogue equals (AddBias, or
// AddBiasRelu: the bias, then ReLU).
Status GemmBias(const ExecContext& ctx, const Tensor& x, const Tensor& w, const Tensor& bias, bool relu, Tensor* y) {
  FS_RETURN_IF_ERROR(cuda::Gemm(ctx, x, false, w, false, 1.0f, 0.0f, y));
  return relu ? cuda::AddBiasRelu(ctx, *y, bias, y) : cuda::AddBias(ctx, *y, bias, y);
}

// cuBLAS's product, then the pass the CPU's epilogue equals
// (ReluBackwardSumRows, in place: its select reads each element before
// writing it).
Status GemmReluBackward(const ExecContext& ctx, const Tensor& grad_y, const Tensor& w, const Tensor& y,
                        Tensor* grad_z, Tensor* grad_bias) {
  FS_RETURN_IF_ERROR(cuda::Gemm(ctx, grad_y, false, w, true, 1.0f, 0.0f, grad_z));
  return cuda::ReluBackwardSumRows(ctx, y, *grad_z, grad_z, grad_bias);
}

}  // namespace foresight::kernels::cuda
