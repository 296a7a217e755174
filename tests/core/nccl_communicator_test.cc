// The NCCL backend's CPU-side behaviour, which runs without a GPU: which
// communicator a device gets (the host world for the CPU, without loading
// CUDA or NCCL), the refusal where no GPU or no CUDA build is there, and
// how NCCL is opened (dlopen on first use): a missing library or a wrong
// one is named. The collectives themselves run in
// core_communicator_nccl_gpu_test (label gpu).
#include "foresight/core/nccl_communicator.h"

#include <fstream>
#include <string>

#include "foresight/core/cuda_available.h"
#include "testing/testing.h"

#ifdef FORESIGHT_TEST_NCCL_LIBRARY
#include <dlfcn.h>

#include "cuda/nccl_library.h"
#endif

namespace foresight {
namespace {

// Whether a library whose path contains `name` is mapped in this process.
bool Mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}

TEST(CommunicatorForTest, TheHostGetsTheWorldAndLoadsNoNccl) {
  ASSERT_OK_AND_ASSIGN(Communicator * world, WorldCommunicator());
  ASSERT_OK_AND_ASSIGN(Communicator * c, CommunicatorFor(Device::Cpu(), world));
  EXPECT_EQ(c, world);
  EXPECT_EQ(c->tensor_device(), Device::Cpu());
  EXPECT_FALSE(Mapped("libnccl"));
  EXPECT_FALSE(Mapped("libcuda"));
}

TEST(CommunicatorForTest, AGpuThatIsNotThereIsRefusedWithTheReason) {
  if (CudaCompiledIn() && CudaDeviceCount() > 0) {
    GTEST_SKIP() << "a GPU is visible: core_communicator_nccl_gpu_test runs the NCCL communicator on it";
  }
  ASSERT_OK_AND_ASSIGN(Communicator * world, WorldCommunicator());
  StatusOr<Communicator*> c = CommunicatorFor(Device::Cuda(0), world);
  ASSERT_FALSE(c.ok());
  if (CudaCompiledIn()) {
    // CudaAvailable()'s reason (no driver, no device), before NCCL is tried.
    EXPECT_EQ(c.status().message(), CudaAvailable().message());
  } else {
    EXPECT_ERROR_CONTAINS(c.status(), "need the NCCL communicator", "-DFORESIGHT_CUDA=ON");
  }
  EXPECT_FALSE(Mapped("libnccl"));
  // Nor a host device asked of MakeNcclCommunicator.
  EXPECT_FALSE(MakeNcclCommunicator(world, Device::Cpu()).ok());
}

#ifdef FORESIGHT_TEST_NCCL_LIBRARY
TEST(NcclLibraryTest, AMissingLibraryIsNamedWithWhatToDo) {
  StatusOr<internal::NcclLibrary> lib = internal::LoadNcclLibrary("libnccl-missing-for-this-test.so.2");
  EXPECT_ERROR_CONTAINS(lib.status(), "needs NCCL, but libnccl-missing-for-this-test.so.2 could not be loaded: ",
                        "LD_LIBRARY_PATH", "FORESIGHT_NCCL_LIBRARY");
  EXPECT_EQ(lib.status().code(), StatusCode::kFailedPrecondition);
}

TEST(NcclLibraryTest, ALibraryThatIsNotNcclIsNamedWithTheMissingEntryPoint) {
  StatusOr<internal::NcclLibrary> lib = internal::LoadNcclLibrary("libc.so.6");
  EXPECT_ERROR_CONTAINS(lib.status(), "libc.so.6 was loaded but has no ncclGetVersion",
                        "it is not the NCCL " + std::to_string(NCCL_MAJOR));
}

TEST(NcclLibraryTest, TheSonameFollowsTheHeadersOrTheEnvironment) {
  unsetenv("FORESIGHT_NCCL_LIBRARY");
  EXPECT_EQ(internal::NcclSoname(), "libnccl.so." + std::to_string(NCCL_MAJOR));
  setenv("FORESIGHT_NCCL_LIBRARY", "/opt/nccl/lib/libnccl.so.2", 1);
  EXPECT_EQ(internal::NcclSoname(), "/opt/nccl/lib/libnccl.so.2");
  unsetenv("FORESIGHT_NCCL_LIBRARY");
}

// Loading needs no GPU: every entry point the communicator calls resolves
// from the installed NCCL, and its version is the headers' major.
TEST(NcclLibraryTest, TheInstalledLibraryHasEveryEntryPoint) {
  const std::string soname = internal::NcclSoname();
  void* probe = dlopen(soname.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (probe == nullptr) GTEST_SKIP() << soname << " is not installed here: " << dlerror();
  ASSERT_OK_AND_ASSIGN(internal::NcclLibrary lib, internal::LoadNcclLibrary(soname));
  EXPECT_EQ(lib.version / 10000, NCCL_MAJOR);
  EXPECT_GE(lib.version % 10000 / 100, 14);
  EXPECT_STRNE(lib.error_string(ncclInvalidArgument), "");
  ASSERT_OK_AND_ASSIGN(const internal::NcclLibrary* once, internal::Nccl());
  EXPECT_EQ(once->version, lib.version);
}
#endif

}  // namespace
}  // namespace foresight
