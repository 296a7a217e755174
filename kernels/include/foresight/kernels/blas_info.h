// Which BLAS the CPU kernels call, and which of its kernel families it
// chose for this CPU, for --version and for tests. Debian's OpenBLAS is
// built for every x86 family and picks one at load time (DYNAMIC_ARCH).
#pragma once

#include <string>

namespace foresight::kernels {

// "OpenBLAS 0.3.21, SkylakeX kernels" (the library's own names).
std::string BlasDescription();

// When OpenBLAS fell back to its generic SSE3 kernels (Prescott) on a CPU
// with AVX2 or AVX-512 and the user did not choose (OPENBLAS_CORETYPE
// unset), runs this program again (execv of /proc/self/exe with `argv`)
// with OPENBLAS_CORETYPE naming the family the CPU's features support.
// For the top of an executable's main, before anything else runs. Returns
// only when nothing needed doing or the exec failed (the run then goes on
// with the generic kernels).
void RerunWithTheCpusBlasKernels(char** argv);

}  // namespace foresight::kernels
