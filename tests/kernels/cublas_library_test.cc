// cuBLAS is opened on first use, not linked (kernels/src/cuda/
// cublas_library.h): the process maps no libcublas until Cublas() is
// called, and then either every entry point resolves or the status names
// the library and dlerror's reason. CUDA builds only; runs without a GPU
// (opening the library needs no device). Its own executable: the check
// before the first call needs a process that has not called it yet.
#include "cublas_library.h"

#include <fstream>
#include <sstream>
#include <string>

#include "testing/testing.h"

namespace foresight::kernels::cuda {
namespace {

bool MapsName(const std::string& what) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find(what) != std::string::npos;
}

TEST(CublasLibrary, OpenedOnFirstUseOnly) {
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  ASSERT_TRUE(MapsName("libc.so")) << "no /proc/self/maps to read";
  EXPECT_FALSE(MapsName("libcublas")) << "cuBLAS is mapped before its first use (linked again?)";
  EXPECT_FALSE(MapsName("libcudart")) << "the shared CUDA runtime is mapped (linked again?)";
  const StatusOr<const CublasLibrary*> lib = Cublas();
  if (lib.ok()) {
    const CublasLibrary& t = *lib.value();
    EXPECT_NE(t.create, nullptr);
    EXPECT_NE(t.set_stream, nullptr);
    EXPECT_NE(t.set_math_mode, nullptr);
    EXPECT_NE(t.sgemm, nullptr);
    ASSERT_NE(t.status_string, nullptr);
    EXPECT_STRNE(t.status_string(CUBLAS_STATUS_SUCCESS), "");
    EXPECT_TRUE(MapsName(soname));
    // Loaded once: the same table again.
    EXPECT_EQ(Cublas().value(), &t);
  } else {
    // No cuBLAS on this machine's library path: the reason, not a crash.
    EXPECT_ERROR_CONTAINS(lib.status(), "needs cuBLAS, but " + soname + " could not be loaded: ", soname);
    EXPECT_ERROR_CONTAINS(Cublas().status(), lib.status().message());
  }
}

}  // namespace
}  // namespace foresight::kernels::cuda
