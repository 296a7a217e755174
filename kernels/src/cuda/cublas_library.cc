#include "cublas_library.h"

#include <dlfcn.h>

#include <string>

namespace foresight::kernels::cuda {

namespace {

// What dlerror says, or `fallback` when it says nothing.
std::string DlError(const char* fallback) {
  const char* e = dlerror();
  return e != nullptr ? e : fallback;
}

template <typename Fn>
Status Resolve(void* lib, const std::string& soname, const char* symbol, Fn* fn) {
  dlerror();
  *fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (*fn != nullptr) return Status::OK();
  return FailedPrecondition(soname + " was loaded but has no " + symbol + " (" + DlError("symbol not found") +
                            "): it is not the cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) +
                            " this foresight was built against");
}

StatusOr<CublasLibrary> Load() {
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return FailedPrecondition("a GEMM on the GPU needs cuBLAS, but " + soname +
                              " could not be loaded: " + DlError("dlopen failed") +
                              " (put the CUDA toolkit's lib64 folder on LD_LIBRARY_PATH)");
  }
  CublasLibrary t{};
  FS_RETURN_IF_ERROR(Resolve(lib, soname, "cublasCreate_v2", &t.create));
  FS_RETURN_IF_ERROR(Resolve(lib, soname, "cublasSetStream_v2", &t.set_stream));
  FS_RETURN_IF_ERROR(Resolve(lib, soname, "cublasSetMathMode", &t.set_math_mode));
  FS_RETURN_IF_ERROR(Resolve(lib, soname, "cublasSgemm_v2", &t.sgemm));
  FS_RETURN_IF_ERROR(Resolve(lib, soname, "cublasGetStatusString", &t.status_string));
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
