// InputBuffers (trainer/src/pipeline/input_buffers.h): the cached row
// path's x blocks are used again, a block too small for the next x is
// released rather than kept beside the new one (so the pool never holds
// more blocks than there were x alive at once), an x outlives the pool, and
// reserved blocks are resident before any batch and serve the batches.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "foresight/core/tensor.h"
#include "pipeline/input_buffers.h"
#include "testing/testing.h"

namespace foresight::trainer::internal {
namespace {

TEST(InputBuffersTest, AFreedBlockServesTheNextBatchUpToAnEighthLarger) {
  InputBuffers buffers;
  const float* first = nullptr;
  {
    ASSERT_OK_AND_ASSIGN(Tensor x, buffers.Take(800, 16));
    EXPECT_EQ(x.shape(), (Shape{800, 16}));
    EXPECT_EQ(x.dtype(), DType::kF32);
    EXPECT_TRUE(x.is_contiguous());
    first = x.data<float>();
  }
  // 900 rows fit the block of 800 rows plus an eighth.
  ASSERT_OK_AND_ASSIGN(Tensor y, buffers.Take(900, 16));
  EXPECT_EQ(y.data<float>(), first);
  const InputBufferStats s = buffers.stats();
  EXPECT_EQ(s.taken, 2);
  EXPECT_EQ(s.reused, 1);
  EXPECT_EQ(s.blocks, 1);
  EXPECT_EQ(s.released, 0);
}

TEST(InputBuffersTest, ABlockTooSmallIsReleasedNotKept) {
  InputBuffers buffers;
  { ASSERT_OK_AND_ASSIGN(Tensor x, buffers.Take(100, 16)); }
  ASSERT_OK_AND_ASSIGN(Tensor big, buffers.Take(1000, 16));
  big.data<float>()[1000 * 16 - 1] = 1.0f;  // the whole x is writable
  const InputBufferStats s = buffers.stats();
  EXPECT_EQ(s.reused, 0);
  EXPECT_EQ(s.released, 1);
  EXPECT_EQ(s.blocks, 1);
}

TEST(InputBuffersTest, BlocksNeverOutnumberTheXAliveAtOnce) {
  InputBuffers buffers;
  for (int round = 0; round < 5; ++round) {
    std::vector<Tensor> alive;
    for (int i = 0; i < 3; ++i) {
      // Sizes move both ways from batch to batch, as x's do.
      ASSERT_OK_AND_ASSIGN(Tensor x, buffers.Take(500 + 40 * ((round + i) % 3), 8));
      alive.push_back(x);
    }
  }
  const InputBufferStats s = buffers.stats();
  EXPECT_EQ(s.taken, 15);
  EXPECT_LE(s.blocks, 3);
  EXPECT_GE(s.reused, 10);
}

TEST(InputBuffersTest, AnXOutlivesThePool) {
  Tensor x;
  {
    InputBuffers buffers;
    ASSERT_OK_AND_ASSIGN(x, buffers.Take(64, 4));
  }
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i);
  EXPECT_EQ(x.data<float>()[255], 255.0f);
}

// Pages of [p, p + bytes) that mincore(2) finds resident.
int64_t ResidentPages(const void* p, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) / page * page;
  const uintptr_t last = (reinterpret_cast<uintptr_t>(p) + bytes + page - 1) / page * page;
  std::vector<unsigned char> vec((last - first) / page);
  if (::mincore(reinterpret_cast<void*>(first), last - first, vec.data()) != 0) return -1;
  int64_t n = 0;
  for (unsigned char v : vec) n += v & 1;
  return n;
}

TEST(InputBuffersTest, ReservedBlocksAreResidentAndServeTheBatches) {
  InputBuffers buffers;
  // 3 blocks of 1000 x 256 floats (1000 KiB each): the plan's x alive.
  ASSERT_OK(buffers.Reserve(3, 1000, 256));
  InputBufferStats s = buffers.stats();
  EXPECT_EQ(s.blocks, 3);
  EXPECT_EQ(s.taken, 0);
  std::vector<Tensor> alive;
  for (int i = 0; i < 3; ++i) {
    // Batches up to the reserved rows take a reserved block, already
    // resident: every page of the x they asked for is in RAM before a
    // single write (a block not written would show none).
    ASSERT_OK_AND_ASSIGN(Tensor x, buffers.Take(1000 - 100 * i, 256));
    const size_t bytes = static_cast<size_t>(x.numel()) * sizeof(float);
    const int64_t pages = (static_cast<int64_t>(bytes) + ::sysconf(_SC_PAGESIZE) - 1) / ::sysconf(_SC_PAGESIZE);
    EXPECT_GE(ResidentPages(x.data<float>(), bytes), pages - 1) << "x " << i;
    alive.push_back(x);
  }
  s = buffers.stats();
  EXPECT_EQ(s.taken, 3);
  EXPECT_EQ(s.reused, 3);
  EXPECT_EQ(s.blocks, 3);
  EXPECT_EQ(s.released, 0);
}

TEST(InputBuffersTest, RefusesANegativeShape) {
  InputBuffers buffers;
  EXPECT_EQ(buffers.Take(-1, 4).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(buffers.Take(4, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(buffers.Reserve(-1, 4, 4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(buffers.Reserve(2, 4, 0).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace foresight::trainer::internal
