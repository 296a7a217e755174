// Whether a GPU can be used, and why not. CUDA is loaded lazily: the CUDA
// runtime is linked statically and opens the driver (libcuda.so.1) on its
// first call, and cuBLAS is opened on the first GEMM on a GPU, so a
// CPU-only process maps no CUDA library. The first call here (or of
// CudaDeviceCount()) is what loads the driver: make it only when a CUDA
// device is wanted.
#pragma once

#include "foresight/core/status.h"

namespace foresight {

// OK when CudaDeviceCount() > 0; otherwise why no GPU can be used: the build
// has no CUDA, the driver library could not be loaded (dlerror's reason),
// the CUDA runtime's error, or the driver lists no device. Thread-safe; the
// answer is found once per process.
Status CudaAvailable();

}  // namespace foresight
