// The CUDA embedding bags against the CPU implementation, bit for bit, on
// every case of the CPU test (label gpu; skipped with a message where no
// GPU is visible).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "embedding_bag_test_util.h"

namespace foresight::kernels::test {
namespace {

class EmbeddingBagCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU visible: the CUDA embedding bags are compiled but not run";
  }
};

// Every case of the CPU test at three widths: the case's own (12 for f32:
// four columns a lane; 13 for f16), 13 (f32 one column a lane) and 140 (f32:
// a warp's 128 columns, then a partial pass); with bags of 0-4 ids, and with
// one id a bag (the forward's batched path; 301 samples, so the last warp
// holds fewer bags than the others).
TEST_F(EmbeddingBagCudaTest, MatchesCpuBitForBit) {
  for (Case c : AllCases()) {
    for (const int64_t dim : {c.dim, int64_t{13}, int64_t{140}}) {
      for (const bool one_id : {false, true}) {
        c.batch = one_id ? 301 : 300;
        c.min_bag = one_id ? 1 : 0;
        c.max_bag = one_id ? 1 : 4;
        c.rows_per_table = 40;
        c.dim = dim;
        SCOPED_TRACE(Name(c) + " dim " + std::to_string(dim) + (one_id ? " one id a bag" : ""));
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
  }
}

// Bad offsets, table offsets and ids give the CPU's error, word for word, on
// the GPU (found there and reported after one read back), also when several
// are bad at once (the CPU's order: offsets, table offsets, ids).
TEST_F(EmbeddingBagCudaTest, ReportsTheCpuErrors) {
  for (const bool one_id : {false, true}) {
    SCOPED_TRACE(one_id ? "one id a bag" : "bags of 0-4 ids");
    Case c;
    c.min_bag = one_id ? 1 : 0;
    c.max_bag = one_id ? 1 : 4;
    c.batch = 300;
    c.tables = 4;
    c.rows_per_table = 40;
    const Problem p = Make(c);
    const int64_t nb = c.batch * c.tables;
    struct Bad {
      const char* what;
      std::function<void(Tensor* ids, Tensor* offsets, Tensor* table_offsets)> make;
    };
    auto i64 = [](Tensor* t, int64_t i) -> int64_t& { return t->data<int64_t>()[i]; };
    const std::vector<Bad> bads = {
        {"an id past its table", [&](Tensor* ids, Tensor*, Tensor*) { i64(ids, 500) = c.rows_per_table; }},
        {"a negative id, then a later one past",
         [&](Tensor* ids, Tensor*, Tensor*) {
           i64(ids, 700) = -1;
           i64(ids, 900) = c.rows_per_table + 3;
         }},
        {"offsets[0] not 0", [&](Tensor*, Tensor* o, Tensor*) { i64(o, 0) = 1; }},
        {"decreasing offsets", [&](Tensor*, Tensor* o, Tensor*) { i64(o, 77) = i64(o, 76) - 1; }},
        {"offsets ending short", [&](Tensor*, Tensor* o, Tensor*) { i64(o, nb) -= 1; }},
        {"offsets far past the ids", [&](Tensor*, Tensor* o, Tensor*) { i64(o, 500) = 1 << 30; }},
        {"table offsets decreasing", [&](Tensor*, Tensor*, Tensor* t) { i64(t, 2) = i64(t, 3) + 1; }},
        {"table offsets past the rows", [&](Tensor*, Tensor*, Tensor* t) { i64(t, c.tables) = 1 << 20; }},
        {"a negative first table offset", [&](Tensor*, Tensor*, Tensor* t) { i64(t, 0) = -5; }},
        {"bad table offsets and a bad id",
         [&](Tensor* ids, Tensor*, Tensor* t) {
           i64(t, 1) = -1;
           i64(ids, 3) = -7;
         }},
        {"bad offsets and bad table offsets",
         [&](Tensor*, Tensor* o, Tensor* t) {
           i64(o, 600) = i64(o, 599) - 1;
           i64(t, c.tables) = 1 << 20;
         }},
    };
    const Device d = Device::Cuda(0);
    ExecContext gpu_ctx = CpuContext();
    gpu_ctx.device = d;
    for (const Bad& bad : bads) {
      SCOPED_TRACE(bad.what);
      Tensor ids = p.ids.Clone(), offsets = p.offsets.Clone(), table_offsets = p.table_offsets.Clone();
      bad.make(&ids, &offsets, &table_offsets);
      Tensor w = p.weights.Clone();
      Tensor out = Tensor::Empty({c.batch, c.tables * c.dim}, DType::kF32);
      const Status want =
          EmbeddingBagForward(CpuContext(), p.layout, w, table_offsets, ids, offsets, Tensor(), Pooling::kSum, &out);
      ASSERT_FALSE(want.ok());
      Tensor gw = w.To(d).value(), gids = ids.To(d).value(), goff = offsets.To(d).value(),
             gto = table_offsets.To(d).value(), ggrad = p.grad_out.To(d).value();
      Tensor gout = Tensor::EmptyOn(d, {c.batch, c.tables * c.dim}, DType::kF32).value();
      const Status got = EmbeddingBagForward(gpu_ctx, p.layout, gw, gto, gids, goff, Tensor(), Pooling::kSum, &gout);
      EXPECT_EQ(got.ToString(), want.ToString());
      // The backward reports the same error and leaves the rows as they were.
      const Status want_back =
          EmbeddingBagBackwardUpdate(CpuContext(), p.layout, SparseOptimizerConfig{}, table_offsets, ids, offsets,
                                     Tensor(), Pooling::kSum, p.grad_out, &w);
      const Status got_back = EmbeddingBagBackwardUpdate(gpu_ctx, p.layout, SparseOptimizerConfig{}, gto, gids, goff,
                                                         Tensor(), Pooling::kSum, ggrad, &gw);
      EXPECT_EQ(got_back.ToString(), want_back.ToString());
      const Tensor back = gw.To(Device::Cpu()).value();
      EXPECT_EQ(0, std::memcmp(back.raw_data(), p.weights.raw_data(), back.nbytes()));
    }
  }
}

}  // namespace
}  // namespace foresight::kernels::test
