// The communicator's collectives against values each rank can compute by
// itself. Run as one process (ctest's discovered tests: the single-process
// backend) and under `mpirun -np 2` / `-np 3`, over shared memory and TCP
// (tests/core/CMakeLists.txt): every rank runs every test in the same
// order, so the collectives line up.
//
// Built a second time with FORESIGHT_TEST_NCCL (core_communicator_nccl_gpu_test,
// label gpu): the same suite on the NCCL backend on cuda:0, each
// collective's host data mirrored to the GPU (device_mirror_communicator.h),
// plus the device-tensor cases at the end; skipped where no GPU is visible.
#include "foresight/core/communicator.h"

#include <cstdlib>

#include "testing/testing.h"

#ifdef FORESIGHT_TEST_NCCL
#include "device_mirror_communicator.h"
#include "foresight/core/cuda_available.h"
#include "foresight/core/nccl_communicator.h"
// Its own suite name, so ctest's names do not clash with the host suite's.
#define CommunicatorTest NcclCommunicatorTest
#endif

namespace foresight {
namespace {

class CommunicatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef FORESIGHT_TEST_NCCL
    if (CudaDeviceCount() == 0) {
      GTEST_SKIP() << "no GPU visible (" << CudaAvailable().message()
                   << "): the NCCL communicator is compiled but not run";
    }
#endif
  }
};

StatusOr<Communicator*> HostWorld() { return WorldCommunicator(); }

#ifdef FORESIGHT_TEST_NCCL
// The job's NCCL communicator on cuda:0 (one GPU per rank: run it at -np 1
// on a one-GPU machine).
StatusOr<Communicator*> NcclWorld() {
  FS_ASSIGN_OR_RETURN(Communicator * world, HostWorld());
  return CommunicatorFor(Device::Cuda(0), world);
}

StatusOr<Communicator*> TestedWorld() {
  FS_ASSIGN_OR_RETURN(Communicator * nccl, NcclWorld());
  static testing::DeviceMirrorCommunicator mirror(nccl);
  return &mirror;
}
const char* ExpectedBackend() { return "nccl"; }
#else
StatusOr<Communicator*> TestedWorld() { return HostWorld(); }
const char* ExpectedBackend() { return LaunchedWorldSize() > 1 || std::getenv("OMPI_COMM_WORLD_SIZE") ? "mpi" : "single"; }
#endif

Communicator* World() {
  StatusOr<Communicator*> w = TestedWorld();
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? *w : nullptr;
}

TEST_F(CommunicatorTest, RankAndSizeMatchTheLauncher) {
  Communicator* c = World();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->size(), LaunchedWorldSize());
  EXPECT_GE(c->rank(), 0);
  EXPECT_LT(c->rank(), c->size());
  EXPECT_STREQ(c->backend(), ExpectedBackend());
  // Every rank appears once, in rank order.
  Tensor mine = Tensor::Empty({1}, DType::kI64);
  mine.data<int64_t>()[0] = c->rank();
  Tensor all;
  ASSERT_OK(c->AllGather(mine, &all));
  ASSERT_EQ(all.numel(), c->size());
  for (int r = 0; r < c->size(); ++r) EXPECT_EQ(all.data<int64_t>()[r], r);
}

TEST_F(CommunicatorTest, AllReduceSumsF32F64AndI64) {
  Communicator* c = World();
  ASSERT_NE(c, nullptr);
  const int n = c->size(), r = c->rank();
  const int64_t len = 1000;
  std::vector<float> f(len);
  std::vector<double> d(len);
  std::vector<int64_t> i(len);
  for (int64_t k = 0; k < len; ++k) {
    f[k] = static_cast<float>(r * 10 + k);
    d[k] = 0.25 * (r + 1) + 1e6 * static_cast<double>(k);  // exact in any order
    i[k] = (int64_t{r} + 1) * (int64_t{1} << 40) + k;      // beyond 2^53: exact only as i64
  }
  ASSERT_OK(c->AllReduceSum(f.data(), len));
  ASSERT_OK(c->AllReduceSum(d.data(), len));
  ASSERT_OK(c->AllReduceSum(i.data(), len));
  const int64_t rank_sum = int64_t{n} * (n - 1) / 2;
  for (int64_t k = 0; k < len; ++k) {
    ASSERT_EQ(f[k], static_cast<float>(10 * rank_sum + n * k)) << "element " << k;
    ASSERT_EQ(d[k], 0.25 * (rank_sum + n) + 1e6 * static_cast<double>(n * k)) << "element " << k;
    ASSERT_EQ(i[k], (rank_sum + n) * (int64_t{1} << 40) + n * k) << "element " << k;
  }
  // The tensor form, and zero elements.
  Tensor t = Tensor::Empty({2, 3}, DType::kF32);
  for (int k = 0; k < 6; ++k) t.data<float>()[k] = static_cast<float>(k * (r + 1));
  ASSERT_OK(c->AllReduceSum(&t));
  for (int k = 0; k < 6; ++k) EXPECT_EQ(t.data<float>()[k], static_cast<float>(k * (rank_sum + n)));
  ASSERT_OK(c->AllReduceSum(static_cast<float*>(nullptr), 0));
  Tensor u8 = Tensor::Zeros({4}, DType::kU8);
  EXPECT_ERROR_CONTAINS(c->AllReduceSum(&u8), "f32 or i64");
}

TEST_F(CommunicatorTest, StartedSumsCompleteInAnyWaitOrder) {
  Communicator* c = World();
  ASSERT_NE(c, nullptr);
  const int n = c->size(), r = c->rank();
  const int64_t rank_sum = int64_t{n} * (n - 1) / 2;
  // Several outstanding at once, of different types and sizes (one empty),
  // waited for in another order than started, with progress between.
  std::vector<float> big(100000);
  for (size_t k = 0; k < big.size(); ++k) big[k] = static_cast<float>(r + static_cast<int64_t>(k % 1000));
  std::vector<int64_t> small = {r, 7, int64_t{r} << 40};
  std::vector<double> none;
  Communicator::Pending p_big, p_small, p_none;
  ASSERT_OK(c->StartAllReduceSum(big.data(), static_cast<int64_t>(big.size()), Communicator::SumType::kF32, &p_big));
  ASSERT_OK(c->StartAllReduceSum(small.data(), 3, Communicator::SumType::kI64, &p_small));
  ASSERT_OK(c->StartAllReduceSum(none.data(), 0, Communicator::SumType::kF64, &p_none));
  ASSERT_TRUE(p_big.valid() && p_small.valid() && p_none.valid());
  for (int i = 0; i < 10; ++i) ASSERT_OK(c->Progress());
  ASSERT_OK(c->Wait(&p_none));
  ASSERT_OK(c->Wait(&p_small));
  ASSERT_OK(c->Wait(&p_big));
  EXPECT_FALSE(p_big.valid());
  EXPECT_EQ(small[0], rank_sum);
  EXPECT_EQ(small[1], 7 * n);
  EXPECT_EQ(small[2], rank_sum << 40);
  for (size_t k = 0; k < big.size(); ++k) {
    ASSERT_EQ(big[k], static_cast<float>(rank_sum + n * static_cast<int64_t>(k % 1000))) << "element " << k;
  }
  // A blocking collective after started ones still lines up.
  int64_t one = 1;
  ASSERT_OK(c->AllReduceSum(&one, 1));
  EXPECT_EQ(one, n);
}

TEST_F(CommunicatorTest, WaitRefusesAHandleNotStartedOrWaitedTwice) {
  Communicator* c = World();
  ASSERT_NE(c, nullptr);
  Communicator::Pending never;
  EXPECT_ERROR_CONTAINS(c->Wait(&never), "not started or was already waited for");
  float x = 1;
  Communicator::Pending p;
  ASSERT_OK(c->StartAllReduceSum(&x, 1, Communicator::SumType::kF32, &p));
  Communicator::Pending moved = std::move(p);
  EXPECT_ERROR_CONTAINS(c->Wait(&p), "not started or was already waited for");
  ASSERT_OK(c->Wait(&moved));
  EXPECT_EQ(x, static_cast<float>(c->size()));
  EXPECT_ERROR_CONTAINS(c->Wait(&moved), "not started or was already waited for");
  EXPECT_ERROR_CONTAINS(c->StartAllReduceSum(nullptr, 3, Communicator::SumType::kF32, &p), "null data");
}

TEST_F(CommunicatorTest, AllGatherConcatenatesInRankOrder) {
  Communicator* c = World();
  ASSERT_NE(c, nullptr);
  Tensor mine = Tensor::Empty({2, 3}, DType::kI32);
  for (int k = 0; k < 6; ++k) mine.data<int32_t>()[k] = c->rank() * 100 + k;
  Tensor all;
  ASSERT_OK(c->AllGather(mine, &all));
  ASSERT_EQ(all.shape(), (Shape{2 * c->size(), 3}));
  for (int r = 0; r < c->size(); ++r) {
    for (int k = 0; k < 6; ++k) ASSERT_EQ(all.data<int32_t>()[r * 6 + k], r * 100 + k);
  }
  // Zero rows from every rank.
  Tensor none = Tensor::Empty({0, 3}, DType::kF32);
  ASSERT_OK(c->AllGather(none, &all));
  EXPECT_EQ(all.shape(), (Shape{0, 3}));
}

// Rows rank `from` sends rank `to` in the uneven exchange: 0, 1 or 2, so
// some parts (and on 3 ranks whole columns) are empty.
int64_t Count(int from, int to) { return (from + 2 * to) % 3; }

TEST_F(CommunicatorTest, AllToAllVRoutesUnevenPartsIncludingEmptyOnes) {
  Communicator* c = World();
  ASSERT_NE(c, nullptr);
  const int n = c->size(), me = c->rank();
  std::vector<int64_t> counts(n);
  int64_t rows = 0;
  for (int to = 0; to < n; ++to) rows += counts[to] = Count(me, to);
  // Row k of the part for `to` holds (from, to, k) in its two columns as from*100+to, k.
  Tensor send = Tensor::Empty({rows, 2}, DType::kF32);
  int64_t at = 0;
  for (int to = 0; to < n; ++to) {
    for (int64_t k = 0; k < counts[to]; ++k, ++at) {
      send.data<float>()[at * 2] = static_cast<float>(me * 100 + to);
      send.data<float>()[at * 2 + 1] = static_cast<float>(k);
    }
  }
  Tensor got;
  std::vector<int64_t> recv_counts;
  ASSERT_OK(c->AllToAllV(send, counts, &got, &recv_counts));
  ASSERT_EQ(static_cast<int>(recv_counts.size()), n);
  int64_t expected_rows = 0;
  for (int from = 0; from < n; ++from) {
    EXPECT_EQ(recv_counts[from], Count(from, me)) << "from rank " << from;
    expected_rows += Count(from, me);
  }
  ASSERT_EQ(got.shape(), (Shape{expected_rows, 2}));
  at = 0;
  for (int from = 0; from < n; ++from) {
    for (int64_t k = 0; k < Count(from, me); ++k, ++at) {
      EXPECT_EQ(got.data<float>()[at * 2], static_cast<float>(from * 100 + me)) << "row " << at;
      EXPECT_EQ(got.data<float>()[at * 2 + 1], static_cast<float>(k)) << "row " << at;
    }
  }
  // Nothing at all to send.
  Tensor empty = Tensor::Empty({0, 2}, DType::kF32);
  ASSERT_OK(c->AllToAllV(empty, std::vector<int64_t>(n, 0), &got, &recv_counts));
  EXPECT_EQ(got.shape(), (Shape{0, 2}));
  for (int64_t k : recv_counts) EXPECT_EQ(k, 0);
  // Counts that do not add up to the rows are refused before any exchange.
  EXPECT_ERROR_CONTAINS(c->AllToAllV(send, std::vector<int64_t>(n, rows + 1), &got, &recv_counts),
                        "send counts add up to");
  EXPECT_ERROR_CONTAINS(c->AllToAllV(send, std::vector<int64_t>(n + 1, 0), &got, &recv_counts), "send counts for");
}

TEST_F(CommunicatorTest, AllToAllSendsEqualParts) {
  Communicator* c = World();
  ASSERT_NE(c, nullptr);
  const int n = c->size(), me = c->rank();
  Tensor send = Tensor::Empty({n * 2}, DType::kI64);
  for (int to = 0; to < n; ++to) {
    for (int k = 0; k < 2; ++k) send.data<int64_t>()[to * 2 + k] = me * 1000 + to * 10 + k;
  }
  Tensor got;
  ASSERT_OK(c->AllToAll(send, &got));
  ASSERT_EQ(got.numel(), n * 2);
  for (int from = 0; from < n; ++from) {
    for (int k = 0; k < 2; ++k) EXPECT_EQ(got.data<int64_t>()[from * 2 + k], from * 1000 + me * 10 + k);
  }
  if (n > 1) {  // one rank takes any number of rows
    Tensor odd = Tensor::Empty({n * 2 + 1}, DType::kI64);
    EXPECT_ERROR_CONTAINS(c->AllToAll(odd, &got), "divide evenly");
  }
}

TEST_F(CommunicatorTest, BroadcastFromEveryRoot) {
  Communicator* c = World();
  ASSERT_NE(c, nullptr);
  for (int root = 0; root < c->size(); ++root) {
    Tensor t = Tensor::Empty({5}, DType::kI64);
    for (int k = 0; k < 5; ++k) t.data<int64_t>()[k] = c->rank() * 7 + k;
    ASSERT_OK(c->Broadcast(&t, root));
    for (int k = 0; k < 5; ++k) EXPECT_EQ(t.data<int64_t>()[k], root * 7 + k) << "root " << root;
  }
  Tensor t = Tensor::Empty({1}, DType::kI64);
  EXPECT_ERROR_CONTAINS(c->Broadcast(&t, c->size()), "is not a rank");
  EXPECT_OK(c->Barrier());
}

#ifdef FORESIGHT_TEST_NCCL
// Device tensors straight into the NCCL communicator (no mirror): the tensor
// forms, and host tensors refused.
TEST_F(CommunicatorTest, DeviceTensorsAndHostTensorsRefused) {
  ASSERT_OK_AND_ASSIGN(Communicator * c, NcclWorld());
  EXPECT_EQ(c->tensor_device(), Device::Cuda(0));
  const int n = c->size(), r = c->rank();
  Tensor host = Tensor::Empty({4}, DType::kF32);
  for (int k = 0; k < 4; ++k) host.data<float>()[k] = static_cast<float>(k + r);
  ASSERT_OK_AND_ASSIGN(Tensor t, host.To(Device::Cuda(0)));
  ASSERT_OK(c->AllReduceSum(&t));
  ASSERT_OK_AND_ASSIGN(Tensor back, t.To(Device::Cpu()));
  const int64_t rank_sum = int64_t{n} * (n - 1) / 2;
  for (int k = 0; k < 4; ++k) EXPECT_EQ(back.data<float>()[k], static_cast<float>(n * k + rank_sum));
  // Equal parts, through the base class's AllToAll.
  ASSERT_OK_AND_ASSIGN(Tensor parts, Tensor::Zeros({2 * n}, DType::kI64).To(Device::Cuda(0)));
  Tensor got;
  ASSERT_OK(c->AllToAll(parts, &got));
  EXPECT_EQ(got.device(), Device::Cuda(0));
  EXPECT_EQ(got.numel(), 2 * n);
  EXPECT_ERROR_CONTAINS(c->AllReduceSum(&host), "must be a tensor on cuda:0");
  EXPECT_ERROR_CONTAINS(c->AllGather(host, &got), "must be a tensor on cuda:0");
  EXPECT_ERROR_CONTAINS(c->Broadcast(&host, 0), "must be a tensor on cuda:0");
  // The same communicator for the same device.
  ASSERT_OK_AND_ASSIGN(Communicator * world, HostWorld());
  ASSERT_OK_AND_ASSIGN(Communicator * again, CommunicatorFor(Device::Cuda(0), world));
  EXPECT_EQ(again, c);
}
#endif

}  // namespace
}  // namespace foresight
