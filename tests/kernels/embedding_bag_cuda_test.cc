// The CUDA embedding bags against the CPU implementation, bit for bit, on
// every case of the CPU test (label gpu; skipped with a message where no
// GPU is visible).
#include <gtest/gtest.h>

#include <cstring>

#include "embedding_bag_test_util.h"

namespace foresight::kernels::test {
namespace {

class EmbeddingBagCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU visible: the CUDA embedding bags are compiled but not run";
  }
};

TEST_F(EmbeddingBagCudaTest, MatchesCpuBitForBit) {
  for (Case c : AllCases()) {
    c.batch = 300;
    c.rows_per_table = 40;
    SCOPED_TRACE(Name(c));
    Problem cpu = Make(c), gpu = Make(c);
    const Device d = Device::Cuda(0);
    auto to = [&](const Tensor& t) { return t.defined() ? t.To(d).value() : Tensor(); };
    Tensor w = to(gpu.weights), to_off = to(gpu.table_offsets), ids = to(gpu.ids), offs = to(gpu.offsets),
           psw = to(gpu.psw), go = to(gpu.grad_out);
    Tensor out = Tensor::EmptyOn(d, {c.batch, c.tables * c.dim}, DType::kF32).value();
    ExecContext ctx = CpuContext();
    ctx.device = d;
    ASSERT_TRUE(EmbeddingBagForward(ctx, gpu.layout, w, to_off, ids, offs, psw, PoolingOf(c), &out).ok());
    ThreadPool pool(2);
    EXPECT_EQ(Vec(out.To(Device::Cpu()).value()), Vec(Forward(cpu, c, &pool)));
    const SparseOptimizerConfig cfg = ConfigOf(c.opt);
    Status s = EmbeddingBagBackwardUpdate(ctx, gpu.layout, cfg, to_off, ids, offs, psw, PoolingOf(c), go, &w);
    ASSERT_TRUE(s.ok()) << s.ToString();
    Backward(&cpu, c, cfg, &pool);
    const Tensor back = w.To(Device::Cpu()).value();
    EXPECT_EQ(0, std::memcmp(back.raw_data(), cpu.weights.raw_data(), back.nbytes()));
  }
}

}  // namespace
}  // namespace foresight::kernels::test
