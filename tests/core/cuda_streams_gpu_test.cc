// Stream slots, events and pinned staging on a GPU (label gpu; skipped
// with a message where none is visible): a batch copied host -> device on
// the copy slot from pinned memory, the compute slot ordered after it by
// an event (no host wait between them), and the result read back.
#include <cstring>
#include <vector>

#include "foresight/core/cuda_streams.h"
#include "foresight/core/tensor.h"
#include "foresight/kernels/ops.h"
#include "testing/testing.h"

namespace foresight {
namespace {

class CudaStreamsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU visible: stream slots and events are compiled but not run";
  }
};

TEST_F(CudaStreamsGpu, SlotsAreStableAndDistinct) {
  const Device d = Device::Cuda(0);
  ASSERT_OK_AND_ASSIGN(void* compute, CudaStreamFor(d, kComputeSlot));
  EXPECT_EQ(compute, nullptr);  // the legacy default stream
  ASSERT_OK_AND_ASSIGN(void* copy, CudaStreamFor(d, kCopySlot));
  ASSERT_OK_AND_ASSIGN(void* copy_again, CudaStreamFor(d, kCopySlot));
  ASSERT_OK_AND_ASSIGN(void* other, CudaStreamFor(d, 2));
  EXPECT_NE(copy, nullptr);
  EXPECT_EQ(copy, copy_again);
  EXPECT_NE(copy, other);
}

TEST_F(CudaStreamsGpu, CopyStreamThenComputeStreamThroughAnEvent) {
  const Device d = Device::Cuda(0);
  const int64_t n = 1 << 20;
  for (int round = 0; round < 3; ++round) {
    ASSERT_OK_AND_ASSIGN(Tensor staged, Tensor::EmptyPinned({n}, DType::kF32));
    EXPECT_EQ(staged.memory_kind(), MemoryKind::kPinnedHost);
    for (int64_t i = 0; i < n; ++i) staged.data<float>()[i] = static_cast<float>(i % 1000) + round;
    ASSERT_OK_AND_ASSIGN(Tensor on_gpu, Tensor::EmptyOn(d, {n}, DType::kF32));
    ASSERT_OK(CopyAsync(on_gpu.raw_data(), staged.raw_data(), on_gpu.nbytes(), d, kCopySlot));
    ASSERT_OK_AND_ASSIGN(StreamEvent copied, StreamEvent::Create(d));
    ASSERT_OK(copied.Record(kCopySlot));
    ASSERT_OK(copied.WaitOn(kComputeSlot));
    // An op on the compute slot (ctx.stream_slot) reads what the copy wrote.
    ExecContext ctx = CpuContext();
    ctx.device = d;
    ctx.stream_slot = kComputeSlot;
    ASSERT_OK_AND_ASSIGN(Tensor out, Tensor::EmptyOn(d, {n}, DType::kF32));
    ASSERT_OK(kernels::Scale(ctx, on_gpu, 2.0f, &out));
    ASSERT_OK_AND_ASSIGN(Tensor back, out.To(Device::Cpu()));
    for (int64_t i = 0; i < n; i += 4097) {
      ASSERT_EQ(back.data<float>()[i], 2.0f * (static_cast<float>(i % 1000) + round)) << "element " << i;
    }
  }
}

TEST_F(CudaStreamsGpu, OpsRunOnACopySlotToo) {
  // An op queued on another slot, then synchronised there.
  const Device d = Device::Cuda(0);
  Tensor host = Tensor::Empty({1000}, DType::kF32);
  for (int64_t i = 0; i < 1000; ++i) host.data<float>()[i] = static_cast<float>(i);
  ASSERT_OK_AND_ASSIGN(Tensor x, host.To(d));
  ASSERT_OK_AND_ASSIGN(Tensor out, Tensor::EmptyOn(d, {1000}, DType::kF32));
  ExecContext ctx = CpuContext();
  ctx.device = d;
  ctx.stream_slot = 2;
  ASSERT_OK(kernels::Add(ctx, x, x, &out));
  ASSERT_OK(SynchronizeStream(d, 2));
  ASSERT_OK_AND_ASSIGN(Tensor back, out.To(Device::Cpu()));
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(back.data<float>()[i], 2.0f * i);
}

// The caches hand a freed block out again once its fence (events at the
// free on every stream) has passed: after a synchronize, at once.
TEST_F(CudaStreamsGpu, FreedBlocksComeBackOnceTheirFencePassed) {
  const Device d = Device::Cuda(0);
  void* pinned = nullptr;
  void* device = nullptr;
  {
    ASSERT_OK_AND_ASSIGN(Tensor p, Tensor::EmptyPinned({1 << 18}, DType::kF32));
    ASSERT_OK_AND_ASSIGN(Tensor g, Tensor::EmptyOn(d, {1 << 18}, DType::kF32));
    pinned = p.raw_data();
    device = g.raw_data();
    ASSERT_OK(CopyAsync(g.raw_data(), p.raw_data(), g.nbytes(), d, kCopySlot));
  }  // freed while the copy may still run: fenced
  ASSERT_OK(SynchronizeStream(d, kCopySlot));
  ASSERT_OK(SynchronizeStream(d, kComputeSlot));
  ASSERT_OK_AND_ASSIGN(Tensor p2, Tensor::EmptyPinned({1 << 18}, DType::kF32));
  ASSERT_OK_AND_ASSIGN(Tensor g2, Tensor::EmptyOn(d, {1 << 18}, DType::kF32));
  EXPECT_EQ(p2.raw_data(), pinned);
  EXPECT_EQ(g2.raw_data(), device);
}

// To(cuda) packs a strided host tensor (a transpose, a column slice) on the
// host first: the device copy holds the logical elements, in order.
TEST_F(CudaStreamsGpu, StridedHostTensorsCopyToTheGpu) {
  Tensor host = Tensor::Empty({3, 5}, DType::kF32);
  for (int64_t i = 0; i < 15; ++i) host.data<float>()[i] = static_cast<float>(i);
  for (const Tensor& view : {host.Transpose(0, 1), host.Slice(1, 1, 4)}) {
    ASSERT_FALSE(view.is_contiguous());
    ASSERT_OK_AND_ASSIGN(Tensor on_gpu, view.To(Device::Cuda(0)));
    ASSERT_OK_AND_ASSIGN(Tensor back, on_gpu.To(Device::Cpu()));
    ASSERT_OK_AND_ASSIGN(Tensor want, view.Contiguous());
    EXPECT_EQ(back.shape(), view.shape());
    EXPECT_EQ(0, std::memcmp(back.raw_data(), want.raw_data(), want.nbytes()));
  }
}

}  // namespace
}  // namespace foresight
