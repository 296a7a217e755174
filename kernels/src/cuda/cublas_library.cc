#include "cublas_library.h"

#include <string>

#include "foresight/core/shared_library.h"

namespace foresight::kernels::cuda {

namespace {

StatusOr<CublasLibrary> Load() {
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  FS_ASSIGN_OR_RETURN(void* lib, OpenSharedLibrary(soname, "a GEMM on the GPU", "cuBLAS",
                                                   "put the CUDA toolkit's lib64 folder on LD_LIBRARY_PATH"));
  const std::string expected = "the cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) + " this foresight was built against";
  CublasLibrary t{};
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "cublasCreate_v2", expected, &t.create));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "cublasSetStream_v2", expected, &t.set_stream));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "cublasSetMathMode", expected, &t.set_math_mode));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "cublasSgemm_v2", expected, &t.sgemm));
  FS_RETURN_IF_ERROR(ResolveFunction(lib, soname, "cublasGetStatusString", expected, &t.status_string));
  return t;
}

}  // namespace

StatusOr<const CublasLibrary*> Cublas() {
  // A function-local static: loaded once, and the outcome (table or error)
  // kept, so every GEMM after a failure gives the same reason.
  static const StatusOr<CublasLibrary> loaded = Load();
  if (!loaded.ok()) return loaded.status();
  return &loaded.value();
}

}  // namespace foresight::kernels::cuda
