#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"
#include "cuda/cuda_ops.h"

namespace foresight::kernels {

Status ValidateCsr(const Csr& csr, const char* what) {
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, what));
  if (csr.device().is_cpu()) return cpu::ValidateCsr(csr, what);
  return cuda::ValidateCsr(csr, what);
}

Status TransposeCsr(const ExecContext& ctx, const Csr& csr, Csr* out, Tensor* edge_perm) {
  if (out == nullptr) return InvalidArgument("TransposeCsr: out is null");
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, "TransposeCsr: csr"));
  if (csr.indices.dtype() == DType::kI32 && csr.num_dst() > INT32_MAX) {
    return InvalidArgument("TransposeCsr: csr has " + std::to_string(csr.num_dst()) +
                           " destinations, too many for i32 indices");
  }
  if (csr.device().is_cpu()) return cpu::TransposeCsr(ctx, csr, out, edge_perm);
  return cuda::TransposeCsr(ctx, csr, out, edge_perm);
}

}  // namespace foresight::kernels
