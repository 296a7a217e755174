// Debian's OpenBLAS (DYNAMIC_ARCH) picks its kernels from the CPU's model
// number once, in its library constructor, before main runs. On a model it
// does not know (a newer Xeon, or a hypervisor that shows a generic one,
// as on the machine bench/RESULTS.md's later figures come from) it falls
// back to Prescott, its SSE3 kernels: every GEMM at half speed (the
// GraphSAGE speed-run epoch 5.0 s against 2.6 s). The only way to choose
// is OPENBLAS_CORETYPE in the environment the constructor sees, and an
// environment set by this process before then does not survive libc's own
// start-up (it resets environ after an executable's .preinit_array runs).
// So the choice costs one exec of the same program, at the top of main,
// when the fallback happened.
#include "foresight/kernels/blas_info.h"

#include <cblas.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include <string>

namespace foresight::kernels {

std::string BlasDescription() {
  // openblas_get_config() starts with "OpenBLAS <version> ..."; keep those
  // two words.
  std::string config = openblas_get_config();
  size_t end = config.find(' ');
  if (end != std::string::npos) end = config.find(' ', end + 1);
  return config.substr(0, end) + ", " + openblas_get_corename() + " kernels";
}

void RerunWithTheCpusBlasKernels(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user's choice, or the rerun itself
  if (std::strcmp(openblas_get_corename(), "Prescott") != 0) return;
  __builtin_cpu_init();
  const char* family = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    family = "SKYLAKEX";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    family = "HASWELL";
  }
  if (family == nullptr) return;  // Prescott is the right family for this CPU
  if (::setenv("OPENBLAS_CORETYPE", family, /*overwrite=*/1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // The exec failed (no /proc): go on as it was, with the variable unset
  // again so that child processes choose for themselves.
  ::unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace foresight::kernels
