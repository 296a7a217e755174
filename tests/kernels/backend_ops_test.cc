// The backend harness (backend_harness.h) over every op group. Built twice:
// kernels_backend_test (label unit) tests the CPU against itself on another
// thread count, which the ops promise to match bit for bit, and runs every
// case and error path here; kernels_backend_cuda_test (label gpu,
// FORESIGHT_BACKEND_CUDA) tests every visible GPU against the CPU and skips
// with a message where there is none.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend_cases.h"
#include "foresight/core/device.h"

namespace foresight::kernels::backend {
namespace {

class BackendOps : public ::testing::TestWithParam<std::string> {};

std::vector<Target> Targets() {
  std::vector<Target> targets;
#if defined(FORESIGHT_BACKEND_CUDA)
  for (int i = 0; i < CudaDeviceCount(); ++i) targets.push_back({Device::Cuda(i), Device::Cuda(i).ToString()});
#else
  targets.push_back({Device::Cpu(), "cpu (3 threads)"});
#endif
  return targets;
}

TEST_P(BackendOps, MatchCpu) {
  const std::vector<Target> targets = Targets();
  if (targets.empty()) {
    GTEST_SKIP() << (CudaCompiledIn() ? "no GPU visible: the CUDA kernels of '" + GetParam() +
                                            "' are compiled but not run here"
                                      : std::string("this build has no CUDA device"));
  }
  const std::vector<Case> cases = MakeGroup(GetParam());
  ASSERT_FALSE(cases.empty()) << "no cases for group " << GetParam();
  ThreadPool ref_pool(1), pool(3);
  for (const Target& target : targets) {
    for (const Case& c : cases) RunCase(c, target, &ref_pool, &pool);
  }
}

// Distinct ctest names for the two executables (Cpu/..., Cuda/...).
#if defined(FORESIGHT_BACKEND_CUDA)
#define FS_BACKEND_TARGETS Cuda
#else
#define FS_BACKEND_TARGETS Cpu
#endif
INSTANTIATE_TEST_SUITE_P(FS_BACKEND_TARGETS, BackendOps, ::testing::ValuesIn(GroupNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace foresight::kernels::backend
