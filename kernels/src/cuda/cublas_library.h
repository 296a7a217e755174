// cuBLAS, opened with dlopen on the first GEMM on a GPU instead of linked:
// libcublas pulls in libcublasLt (540 MB on disk), whose loading alone costs
// every process about 200 MB of RSS, CPU-only runs included. The CUDA
// runtime itself is linked statically (CUDA::cudart_static), which loads the
// driver only on its first call, so a CPU run maps no CUDA library at all.
// cuBLAS needs no shared libcudart (it carries its own), so these few entry
// points are all the program needs from it.
#pragma once

#include <cublas_v2.h>

#include "foresight/core/status.h"

namespace foresight::kernels::cuda {

// The cuBLAS entry points foresight calls, resolved from the library whose
// soname matches the headers it was built with (libcublas.so.<major>).
struct CublasLibrary {
  decltype(&::cublasCreate_v2) create;
  decltype(&::cublasSetStream_v2) set_stream;
  decltype(&::cublasSetMathMode) set_math_mode;
  decltype(&::cublasSgemm_v2) sgemm;
  decltype(&::cublasGetStatusString) status_string;
};

// Loads cuBLAS on the first call and returns its table; later calls return
// the same table (or the same error). FailedPrecondition naming the library
// and dlerror's reason when it cannot be opened or lacks an entry point.
// Thread-safe; the library stays loaded for the process's life.
StatusOr<const CublasLibrary*> Cublas();

}  // namespace foresight::kernels::cuda
