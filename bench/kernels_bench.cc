// Google Benchmark of the hot kernels at the shapes: aggregation
// (Spmm forward + transpose + backward) on a sampled block of ~24k sources,
// and GEMM for the linear layers. Compare against bench/baseline_pytorch.py
// (torch.sparse) measured in the same run on the same machine.
#include <benchmark/benchmark.h>

#include <random>

#include "foresight/core/context.h"
#include "foresight/kernels/ops.h"

namespace foresight::kernels {
namespace {

// A sampled block: num_dst destinations with `fanout` distinct-ish sources
// each, drawn from num_src (the first num_dst sources are the destinations).
Csr SampledBlock(int64_t num_dst, int64_t num_src, int64_t fanout, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Csr csr;
  csr.num_src = num_src;
  csr.indptr = Tensor::Empty({num_dst + 1}, DType::kI64);
  csr.indices = Tensor::Empty({num_dst * fanout}, DType::kI64);
  int64_t* ip = csr.indptr.data<int64_t>();
  int64_t* idx = csr.indices.data<int64_t>();
  for (int64_t v = 0; v <= num_dst; ++v) ip[v] = v * fanout;
  for (int64_t e = 0; e < num_dst * fanout; ++e) idx[e] = static_cast<int64_t>(rng() % num_src);
  return csr;
}

Tensor Random(const Shape& shape, uint64_t seed) {
  Tensor t = Tensor::Empty(shape, DType::kF32);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// Args: reduce (0 sum, 1 mean, 2 max), num_dst, feature width, threads.
void BM_SpmmForwardBackward(benchmark::State& state) {
  const Reduce reduce = static_cast<Reduce>(state.range(0));
  const int64_t num_dst = state.range(1), f = state.range(2), num_src = 24000, fanout = 15;
  ThreadPool pool(static_cast<int>(state.range(3)));
  const ExecContext ctx = CpuContext(0, &pool);
  Csr csr = SampledBlock(num_dst, num_src, fanout, 1);
  Tensor x = Random({num_src, f}, 2), go = Random({num_dst, f}, 3);
  Tensor out = Tensor::Empty({num_dst, f}, DType::kF32), gx = Tensor::Empty({num_src, f}, DType::kF32);
  Tensor am = Tensor::Empty({num_dst, f}, DType::kI64);
  Tensor* amp = reduce == Reduce::kMax ? &am : nullptr;
  for (auto _ : state) {
    Csr t;
    Tensor perm;
    if (!Spmm(ctx, csr, reduce, x, &out, amp).ok()) state.SkipWithError("Spmm failed");
    if (!TransposeCsr(ctx, csr, &t, &perm).ok()) state.SkipWithError("TransposeCsr failed");
    if (!SpmmBackward(ctx, csr, t, perm, reduce, go, am, &gx).ok()) state.SkipWithError("SpmmBackward failed");
    benchmark::DoNotOptimize(gx.raw_data());
  }
  state.SetLabel(ReduceName(reduce));
  state.counters["edges"] = static_cast<double>(csr.num_edges());
}
BENCHMARK(BM_SpmmForwardBackward)
    ->ArgsProduct({{0, 1, 2}, {1024, 10240}, {128, 256}, {1, 2}})
    ->Unit(benchmark::kMillisecond);

// Args: m, k, n, trans_a, threads.
void BM_Gemm(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  const bool ta = state.range(3) != 0;
  ThreadPool pool(static_cast<int>(state.range(4)));
  const ExecContext ctx = CpuContext(0, &pool);
  Tensor a = Random(ta ? Shape{k, m} : Shape{m, k}, 1), b = Random({k, n}, 2);
  Tensor c = Tensor::Empty({m, n}, DType::kF32);
  for (auto _ : state) {
    if (!Gemm(ctx, a, ta, b, false, 1.0f, 0.0f, &c).ok()) state.SkipWithError("Gemm failed");
    benchmark::DoNotOptimize(c.raw_data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Gemm)
    ->Args({24000, 128, 256, 0, 1})
    ->Args({24000, 128, 256, 0, 2})
    ->Args({10240, 256, 256, 0, 2})
    ->Args({256, 24000, 256, 1, 2})  // weight gradient: x^T @ grad
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace foresight::kernels

BENCHMARK_MAIN();
