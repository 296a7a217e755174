#include <string>

#include "check.h"
#include "cpu/cpu_ops.h"

namespace foresight::kernels {

Status GcnNormalize(const ExecContext& ctx, const Csr& csr, Csr* out) {
  if (out == nullptr) return InvalidArgument("GcnNormalize: out is null");
  FS_RETURN_IF_ERROR(internal::CheckCsrShape(csr, "GcnNormalize: csr"));
  if (csr.num_src < csr.num_dst()) {
    return InvalidArgument("GcnNormalize: csr has " + std::to_string(csr.num_dst()) + " destinations but only " +
                           std::to_string(csr.num_src) +
                           " sources; a block's first num_dst sources must be its destinations");
  }
  if (csr.device().is_cpu()) return cpu::GcnNormalize(ctx, csr, out);
  return internal::NoImplementation("GcnNormalize", csr.device());
}

}  // namespace foresight::kernels
