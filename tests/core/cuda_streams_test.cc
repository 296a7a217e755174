// Stream slots and events where no GPU is visible (or no CUDA is compiled):
// every request is refused with a message that says why, never served by
// a host stand-in. The GPU behaviour is in cuda_streams_gpu_test.cc.
#include "foresight/core/cuda_streams.h"

#include "foresight/core/cuda_available.h"

#include "testing/testing.h"

namespace foresight {
namespace {

TEST(CudaStreams, SlotOutsideTheRangeIsRefused) {
  if (!CudaCompiledIn()) GTEST_SKIP() << "this build has no CUDA device (WithoutAGpuEveryCallSaysWhy covers it)";
  EXPECT_ERROR_CONTAINS(CudaStreamFor(Device::Cuda(0), kNumStreamSlots), "stream slot 4", "[0, 4)");
  EXPECT_ERROR_CONTAINS(CudaStreamFor(Device::Cuda(0), -1), "stream slot -1");
}

TEST(CudaStreams, WithoutAGpuEveryCallSaysWhy) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a GPU is visible: cuda_streams_gpu_test covers it";
  const char* why = CudaCompiledIn() ? "GPU(s) are visible" : "has no CUDA device";
  EXPECT_ERROR_CONTAINS(CudaStreamFor(Device::Cuda(0), kCopySlot), why);
  EXPECT_ERROR_CONTAINS(SynchronizeStream(Device::Cuda(0), kComputeSlot), why);
  char a = 1, b = 0;
  EXPECT_ERROR_CONTAINS(CopyAsync(&b, &a, 1, Device::Cuda(0), kCopySlot), why);
  EXPECT_ERROR_CONTAINS(StreamEvent::Create(Device::Cuda(0)), why);
}

// Why no GPU: the build, the driver library (dlerror's words), the runtime
// or an empty device list, never a bare "0 GPUs".
TEST(CudaStreams, CudaAvailableSaysWhyNot) {
  if (CudaDeviceCount() > 0) {
    EXPECT_OK(CudaAvailable());
    return;
  }
  const Status s = CudaAvailable();
  ASSERT_FALSE(s.ok());
  if (!CudaCompiledIn()) {
    EXPECT_ERROR_CONTAINS(s, "has no CUDA device");
  } else if (s.message().find("libcuda.so.1") != std::string::npos) {
    EXPECT_ERROR_CONTAINS(s, "libcuda.so.1 could not be loaded: ", "libcuda.so.1: ");  // dlerror names the file
  } else {
    EXPECT_TRUE(s.message().find("cudaGetDeviceCount failed: ") != std::string::npos ||
                s.message().find("reports no GPU") != std::string::npos)
        << s.message();
  }
  // The allocator's refusal carries the reason.
  if (CudaCompiledIn()) EXPECT_ERROR_CONTAINS(CudaStreamFor(Device::Cuda(0), kCopySlot), s.message());
}

TEST(CudaStreams, CpuHasNoStreams) {
  if (!CudaCompiledIn()) GTEST_SKIP() << "this build has no CUDA device";
  EXPECT_ERROR_CONTAINS(CudaStreamFor(Device::Cpu(), kCopySlot), "cuda devices only", "cpu");
}

TEST(CudaStreams, AnEventNeverCreatedIsRefused) {
  StreamEvent e;
  EXPECT_FALSE(e.valid());
  if (!CudaCompiledIn()) GTEST_SKIP() << "this build has no CUDA device";
  EXPECT_ERROR_CONTAINS(e.Record(kCopySlot), "never created");
  EXPECT_ERROR_CONTAINS(e.WaitOn(kComputeSlot), "never created");
  EXPECT_ERROR_CONTAINS(e.Synchronize(), "never created");
}

}  // namespace
}  // namespace foresight
