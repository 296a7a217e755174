// Google Benchmark of the hot kernels at the shapes: aggregation
// (Spmm forward + transpose + backward) on a sampled block of ~24k sources,
// GEMM for the linear layers, and the GraphSAGE speed run's fused passes
// beside the passes they replace (a batch's feature gather + input dropout;
// ReLU + the next layer's dropout, forward and backward). Compare against bench/baseline_pytorch.py
// (torch.sparse) measured in the same run on the same machine.
#include <benchmark/benchmark.h>

#include <random>

#include "foresight/core/context.h"
#include "foresight/kernels/keyed_dropout.h"
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
    ->Args({5800, 128, 256, 0, 1})   // the speed run's layer 0 (5,800 destinations a batch): forward
    ->Args({128, 5800, 256, 1, 1})   // and its weight gradients x^T dY
    ->Unit(benchmark::kMillisecond);

// SAGEConv's layer-0 forward in the speed run (5,800 destinations, 128
// features in, 256 out) as LinearPairOp computes it: the self product and
// its bias, then the neighbour product accumulated (GEMM beta 1). Args:
// fused (1: GemmBias, the bias in each tile's epilogue; 0: Gemm, then an
// AddBias pass over y), threads.
void BM_SagePairForwardLayer0(benchmark::State& state) {
  const bool fused = state.range(0) != 0;
  const int64_t n = 5800, in = 128, out = 256;
  ThreadPool pool(static_cast<int>(state.range(1)));
  const ExecContext ctx = CpuContext(0, &pool);
  const Tensor x = Random({n, in}, 11), agg = Random({n, in}, 12);
  const Tensor w_self = Random({in, out}, 13), w_neigh = Random({in, out}, 14), bias = Random({out}, 15);
  Tensor y = Tensor::Empty({n, out}, DType::kF32);
  for (auto _ : state) {
    bool ok = true;
    if (fused) {
      ok = ok && GemmBias(ctx, x, w_self, bias, /*relu=*/false, &y).ok();
    } else {
      ok = ok && Gemm(ctx, x, false, w_self, false, 1.0f, 0.0f, &y).ok();
      ok = ok && AddBias(ctx, y, bias, &y).ok();
    }
    ok = ok && Gemm(ctx, agg, false, w_neigh, false, 1.0f, 1.0f, &y).ok();
    if (!ok) state.SkipWithError("a GEMM or AddBias failed");
    benchmark::DoNotOptimize(y.raw_data());
  }
  state.SetLabel(fused ? "GemmBias + Gemm(beta 1)" : "Gemm + AddBias + Gemm(beta 1)");
}
BENCHMARK(BM_SagePairForwardLayer0)->ArgsProduct({{0, 1}, {1}})->Unit(benchmark::kMillisecond);

// Layer 0's mean aggregation in the speed run: 6,000 destinations, about
// 8.5 sampled in-edges each, from 31,000 sources of 128 f32 (16 MB): the
// rows are random in a table beyond L2. Arg: threads.
void BM_SpmmMeanSpeedRunLayer0(benchmark::State& state) {
  const int64_t num_dst = 6000, num_src = 31000, fanout = 9, f = 128;
  ThreadPool pool(static_cast<int>(state.range(0)));
  const ExecContext ctx = CpuContext(0, &pool);
  Csr csr = SampledBlock(num_dst, num_src, fanout, 9);
  Tensor x = Random({num_src, f}, 10), out = Tensor::Empty({num_dst, f}, DType::kF32);
  for (auto _ : state) {
    if (!Spmm(ctx, csr, Reduce::kMean, x, &out, nullptr).ok()) state.SkipWithError("Spmm failed");
    benchmark::DoNotOptimize(out.raw_data());
  }
}
BENCHMARK(BM_SpmmMeanSpeedRunLayer0)->Arg(1)->Unit(benchmark::kMillisecond);

// The speed run's whole feature table (1M x 128 f32, 512 MB: beyond even a
// 260 MB L3) and `sets` sets of a batch's 30k random input rows (each
// sorted by id when `sorted`). One set reused every iteration is L3-resident
// after the first (15 MB of rows); 32 sets put 480 MB of rows between two
// uses of one, so rows come from DRAM as in training, where every batch
// draws new rows.
struct SpeedRunRows {
  Tensor table;
  std::vector<Tensor> ids;
};

SpeedRunRows MakeSpeedRunRows(int64_t sets, bool sorted) {
  const int64_t rows = 1 << 20, f = 128, n = 30000;
  SpeedRunRows r{Random({rows, f}, 4), {}};
  std::mt19937_64 rng(5);
  for (int64_t s = 0; s < sets; ++s) {
    r.ids.push_back(Tensor::Empty({n}, DType::kI64));
    int64_t* p = r.ids.back().data<int64_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(rng() % rows);
    if (sorted) std::sort(p, p + n);
  }
  return r;
}

// The input rows gathered and dropped out (p 0.5) as the direct path does
// by default, keyed by the rows' ids. Args: fused (1: one
// GatherRowsDropout; 0: GatherRows, then DropoutRows), threads, id sets.
void BM_GatherAndInputDropout(benchmark::State& state) {
  const bool fused = state.range(0) != 0;
  ThreadPool pool(static_cast<int>(state.range(1)));
  const ExecContext ctx = CpuContext(7, &pool);
  const SpeedRunRows r = MakeSpeedRunRows(state.range(2), /*sorted=*/false);
  const int64_t n = r.ids[0].size(0), f = r.table.size(1);
  Tensor x = Tensor::Empty({n, f}, DType::kF32), y = Tensor::Empty({n, f}, DType::kF32);
  size_t it = 0;
  for (auto _ : state) {
    const Tensor& ids = r.ids[it++ % r.ids.size()];
    if (fused) {
      if (!GatherRowsDropout(ctx, 0.5f, r.table, ids, &y).ok()) state.SkipWithError("GatherRowsDropout failed");
    } else {
      if (!GatherRows(ctx, r.table, ids, &x).ok()) state.SkipWithError("GatherRows failed");
      if (!DropoutRows(ctx, 0.5f, x, ids, &y, nullptr).ok()) state.SkipWithError("DropoutRows failed");
    }
    benchmark::DoNotOptimize(y.raw_data());
  }
  state.SetLabel(fused ? "GatherRowsDropout" : "GatherRows + DropoutRows");
}
BENCHMARK(BM_GatherAndInputDropout)->ArgsProduct({{0, 1}, {1, 2}, {1, 32}})->Unit(benchmark::kMillisecond);

// The speed-run rows (MakeSpeedRunRows) gathered as the direct path
// gathers them with --input-dropout 0. Args: threads, id sets, sorted.
void BM_GatherRowsSpeedRunTable(benchmark::State& state) {
  ThreadPool pool(static_cast<int>(state.range(0)));
  const ExecContext ctx = CpuContext(7, &pool);
  const SpeedRunRows r = MakeSpeedRunRows(state.range(1), state.range(2) != 0);
  Tensor x = Tensor::Empty({r.ids[0].size(0), r.table.size(1)}, DType::kF32);
  size_t it = 0;
  for (auto _ : state) {
    if (!GatherRows(ctx, r.table, r.ids[it++ % r.ids.size()], &x).ok()) state.SkipWithError("GatherRows failed");
    benchmark::DoNotOptimize(x.raw_data());
  }
  state.SetBytesProcessed(state.iterations() * x.nbytes());
}
BENCHMARK(BM_GatherRowsSpeedRunTable)->ArgsProduct({{1, 2}, {1, 32}, {0, 1}})->Unit(benchmark::kMillisecond);

// Layer 0's output of the speed run ([6000, 256]) through ReLU and layer
// 1's dropout, forward and backward. Arg: fused (1: ReluDropoutRows and one
// DropoutBackward; 0: Activate, DropoutRows, DropoutBackward,
// ActivateBackward), threads.
void BM_ReluAndDropout(benchmark::State& state) {
  const bool fused = state.range(0) != 0;
  const int64_t n = 6000, f = 256;
  ThreadPool pool(static_cast<int>(state.range(1)));
  const ExecContext ctx = CpuContext(8, &pool);
  const Tensor h = Random({n, f}, 6), gy = Random({n, f}, 7);
  Tensor ids = Tensor::Empty({n}, DType::kI64);
  for (int64_t i = 0; i < n; ++i) ids.data<int64_t>()[i] = 3 * i;
  Tensor r = Tensor::Empty({n, f}, DType::kF32), y = Tensor::Empty({n, f}, DType::kF32);
  Tensor g = Tensor::Empty({n, f}, DType::kF32), gh = Tensor::Empty({n, f}, DType::kF32);
  Tensor mask = Tensor::Empty({n, f}, DType::kU8);
  for (auto _ : state) {
    bool ok = true;
    if (fused) {
      ok = ok && ReluDropoutRows(ctx, 0.5f, h, ids, &y, &mask).ok();
      ok = ok && DropoutBackward(ctx, 0.5f, mask, gy, &gh).ok();
    } else {
      ok = ok && Activate(ctx, Activation::kRelu, 0.0f, h, &r).ok();
      ok = ok && DropoutRows(ctx, 0.5f, r, ids, &y, &mask).ok();
      ok = ok && DropoutBackward(ctx, 0.5f, mask, gy, &g).ok();
      ok = ok && ActivateBackward(ctx, Activation::kRelu, 0.0f, h, g, &gh).ok();
    }
    if (!ok) state.SkipWithError("a ReLU / dropout kernel failed");
    benchmark::DoNotOptimize(gh.raw_data());
  }
  state.SetLabel(fused ? "ReluDropoutRows + DropoutBackward" : "Relu + DropoutRows + their backwards");
}
BENCHMARK(BM_ReluAndDropout)->ArgsProduct({{0, 1}, {1, 2}})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace foresight::kernels

BENCHMARK_MAIN();
