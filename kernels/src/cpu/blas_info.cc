// The BLAS behind the CPU kernels' GEMMs, as --version names it.
#include "foresight/kernels/blas_info.h"

#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

namespace foresight::kernels {

std::string BlasDescription() {
  const dnnl_version_t* v = dnnl_version();
  std::string isa = dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa());  // "cpu_isa_avx512_core_bf16"
  if (isa.rfind("cpu_isa_", 0) == 0) isa = isa.substr(8);
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " sgemm, " + isa + " kernels";
}

}  // namespace foresight::kernels
