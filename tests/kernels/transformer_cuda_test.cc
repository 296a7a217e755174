// The transformer ops' CUDA twins against the CPU implementation (label
// gpu; skipped with a message where no GPU is visible): varlen attention
// forward and backward (causal, bidirectional, with dropout: a mask that
// differed in one weight would move the outputs far past the tolerance, so
// this also checks that both devices draw the same mask), LayerNorm with
// bias and residual, GELU in both forms. Tolerances: the GPU sums in
// another order and uses its own expf / erff.
#include <gtest/gtest.h>

#include <numeric>

#include "foresight/kernels/transformer.h"
#include "kernel_test_util.h"

namespace foresight::kernels::test {
namespace {

class TransformerCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) {
      GTEST_SKIP() << "no GPU visible: the transformer ops' CUDA kernels are compiled but not run";
    }
  }
  const Device gpu_ = Device::Cuda(0);
  Tensor ToGpu(const Tensor& t) { return t.defined() ? t.To(gpu_).value() : Tensor(); }
  Tensor Empty(const Shape& s) { return Tensor::EmptyOn(gpu_, s, DType::kF32).value(); }
  static Tensor Back(const Tensor& t) { return t.To(Device::Cpu()).value().Contiguous().value(); }
  ExecContext GpuContext(const ExecContext& cpu) {
    ExecContext c = cpu;
    c.device = gpu_;
    return c;
  }
};

TEST_F(TransformerCudaTest, AttentionMatchesCpu) {
  const std::vector<int64_t> lengths{1, 70, 0, 130, 5, 64};
  std::vector<int64_t> cu{0};
  for (int64_t l : lengths) cu.push_back(cu.back() + l);
  const int64_t tokens = cu.back(), heads = 3, d = 40, width = heads * d;
  const Tensor fused = RandomF32({tokens, 3 * width}, 1, -1.5f, 1.5f);
  const Tensor go = RandomF32({tokens, width}, 2);
  const Tensor cu_cpu = IdsTensor(cu, DType::kI64);
  ThreadPool pool(2);
  const ExecContext cpu = CpuContext(9, &pool);
  for (bool causal : {false, true}) {
    for (float p : {0.0f, 0.3f}) {
      SCOPED_TRACE(std::string(causal ? "causal" : "bidirectional") + " dropout " + std::to_string(p));
      AttentionOptions o;
      o.heads = heads;
      o.causal = causal;
      o.dropout = p;
      auto views = [&](const Tensor& f) {
        return std::vector<Tensor>{f.Slice(1, 0, width), f.Slice(1, width, 2 * width), f.Slice(1, 2 * width, 3 * width)};
      };
      // CPU
      const auto qc = views(fused);
      Tensor out = Tensor::Empty({tokens, width}, DType::kF32), lse = Tensor::Empty({heads, tokens}, DType::kF32);
      ASSERT_TRUE(VarlenAttention(cpu, o, qc[0], qc[1], qc[2], cu_cpu, 130, &out, &lse).ok());
      Tensor grads = Tensor::Empty({tokens, 3 * width}, DType::kF32);
      auto gc = views(grads);
      ASSERT_TRUE(VarlenAttentionBackward(cpu, o, qc[0], qc[1], qc[2], out, lse, go, cu_cpu, 130, &gc[0], &gc[1], &gc[2]).ok());
      // GPU
      const Tensor fg = ToGpu(fused), gog = ToGpu(go), cug = ToGpu(cu_cpu);
      const auto qg = views(fg);
      Tensor outg = Empty({tokens, width}), lseg = Empty({heads, tokens});
      const ExecContext gctx = GpuContext(cpu);
      Status s = VarlenAttention(gctx, o, qg[0], qg[1], qg[2], cug, 130, &outg, &lseg);
      ASSERT_TRUE(s.ok()) << s.ToString();
      Tensor gradsg = Empty({tokens, 3 * width});
      auto gg = views(gradsg);
      s = VarlenAttentionBackward(gctx, o, qg[0], qg[1], qg[2], outg, lseg, gog, cug, 130, &gg[0], &gg[1], &gg[2]);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ExpectClose(ToVec(Back(outg)), ToVec(out), 1e-4, 1e-5, "out");
      ExpectClose(ToVec(Back(lseg)), ToVec(lse), 1e-5, 1e-5, "lse");
      ExpectClose(ToVec(Back(gradsg)), ToVec(grads), 1e-3, 1e-4, "grad_qkv");
    }
  }
}

TEST_F(TransformerCudaTest, LayerNormMatchesCpu) {
  const int64_t t = 300, e = 96;
  const Tensor x = RandomF32({t, e}, 1, -3, 3), bias = RandomF32({e}, 2), res = RandomF32({t, e}, 3),
               gamma = RandomF32({e}, 4), beta = RandomF32({e}, 5), go = RandomF32({t, e}, 6);
  ThreadPool pool(2);
  const ExecContext cpu = CpuContext(1, &pool);
  Tensor sum = Tensor::Empty({t, e}, DType::kF32), y = Tensor::Empty({t, e}, DType::kF32),
         mean = Tensor::Empty({t}, DType::kF32), rstd = Tensor::Empty({t}, DType::kF32);
  ASSERT_TRUE(LayerNorm(cpu, x, bias, res, gamma, beta, 1e-5f, &sum, &y, &mean, &rstd).ok());
  Tensor gh = Tensor::Empty({t, e}, DType::kF32), gga = Tensor::Empty({e}, DType::kF32),
         gbe = Tensor::Empty({e}, DType::kF32);
  ASSERT_TRUE(LayerNormBackward(cpu, sum, gamma, mean, rstd, go, &gh, &gga, &gbe).ok());
  Tensor sumg = Empty({t, e}), yg = Empty({t, e}), meang = Empty({t}), rstdg = Empty({t});
  const ExecContext gctx = GpuContext(cpu);
  Status s = LayerNorm(gctx, ToGpu(x), ToGpu(bias), ToGpu(res), ToGpu(gamma), ToGpu(beta), 1e-5f, &sumg, &yg, &meang,
                       &rstdg);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Tensor ghg = Empty({t, e}), ggag = Empty({e}), gbeg = Empty({e});
  s = LayerNormBackward(gctx, sumg, ToGpu(gamma), meang, rstdg, ToGpu(go), &ghg, &ggag, &gbeg);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectClose(ToVec(Back(sumg)), ToVec(sum), 0, 0, "sum");  // the same adds in the same order
  ExpectClose(ToVec(Back(yg)), ToVec(y), 1e-5, 1e-5, "out");
  ExpectClose(ToVec(Back(ghg)), ToVec(gh), 1e-4, 1e-5, "grad_h");
  ExpectClose(ToVec(Back(ggag)), ToVec(gga), 1e-4, 1e-4, "grad_gamma");
  ExpectClose(ToVec(Back(gbeg)), ToVec(gbe), 0, 0, "grad_beta");  // the CPU's order of adds
}

TEST_F(TransformerCudaTest, GeluMatchesCpu) {
  const Tensor x = RandomF32({50, 70}, 1, -8, 8), bias = RandomF32({70}, 2), go = RandomF32({50, 70}, 3);
  const ExecContext cpu = CpuContext();
  const ExecContext gctx = GpuContext(cpu);
  for (GeluForm form : {GeluForm::kErf, GeluForm::kTanh}) {
    SCOPED_TRACE(GeluFormName(form));
    Tensor y = Tensor::Empty({50, 70}, DType::kF32), gx = Tensor::Empty({50, 70}, DType::kF32);
    ASSERT_TRUE(Gelu(cpu, form, x, bias, &y).ok());
    ASSERT_TRUE(GeluBackward(cpu, form, x, bias, go, &gx).ok());
    Tensor yg = Empty({50, 70}), gxg = Empty({50, 70});
    ASSERT_TRUE(Gelu(gctx, form, ToGpu(x), ToGpu(bias), &yg).ok());
    ASSERT_TRUE(GeluBackward(gctx, form, ToGpu(x), ToGpu(bias), ToGpu(go), &gxg).ok());
    ExpectClose(ToVec(Back(yg)), ToVec(y), 1e-5, 1e-6, "gelu");
    ExpectClose(ToVec(Back(gxg)), ToVec(gx), 1e-4, 1e-5, "gelu'");
  }
}

}  // namespace
}  // namespace foresight::kernels::test
