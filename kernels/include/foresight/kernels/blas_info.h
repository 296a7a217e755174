// Which BLAS the CPU kernels call, and which instruction set its kernels
// use on this CPU, for --version and for tests. oneDNN generates its sgemm
// kernels at run time for the CPU's own instruction set.
#pragma once

#include <string>

namespace foresight::kernels {

// E.g. "oneDNN 2.6.3 sgemm, avx512_core_bf16 kernels" (oneDNN's own names).
std::string BlasDescription();

}  // namespace foresight::kernels
