// The GEMM floor of one DLRM training step (issue 12): every matrix
// product of the step at its own shape, timed through kernels::Gemm
// (oneDNN sgemm, one fixed tile per call, tiles over the pool), so the
// trainer's samples/s can be reported against B / (sum of the GEMM times).
//
// Per Linear layer, laid out as the trainer lays it out (autograd::Linear:
// x [B, in], W [in, out]): forward y = x W, backward dx = dy W^T (not for
// the first bottom layer: its input is data) and dW = x^T dy [in, out].
// (Until session 16 this bench timed W as [out, in]: x W^T, dy W and
// dy^T x. Same FLOPs, other transposes and another dW shape, so other
// tiles: the first bottom layer's dW, 13 x 512, is one tile on one thread
// in the step and was four in the old floor.)
// The dot interaction, per sample, Z [F+1, D] (the bottom output and the
// F pooled embeddings): forward Z Z^T, backward
// dZ = (G + G^T) Z; these products are tiny (27 x 64), so they are timed
// as what a trainer runs: one Gemm per sample, samples spread over the pool
// (a Gemm inside a pool task runs inline), or as one oneDNN batched matmul
// when that is faster (batched_matmul.h). Each product is timed alone,
// best of --reps after a warm-up, and the floors are sums of the bests:
//   mlp_gemm_ms          the MLPs' products
//   interaction_gemm_ms  the interaction's products
//   step_gemm_ms         both; step_gemm_floor_samples_per_s = B / it
// Prints one JSON line (with each product's shape, ms and GFLOP/s), and
// each product's process CPU time (all threads) and their sum
// (step_gemm_cpu_ms): a loaded machine inflates wall time, not CPU time.
// The CPU time is the mean over at least 0.25 s of back-to-back runs, not
// the best run (cpu_window.h: the best of short runs missed a spinning
// worker's CPU, 47.6 CPU ms in session 15 against about 62 by perf).
//
// Usage: dlrm_gemm_floor [--batch 2048] [--dense 13] [--tables 26]
//   [--dim 64] [--bottom 512,256,64] [--top 512,256,1] [--threads 2]
//   [--reps 20]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "batched_matmul.h"
#include "cpu_window.h"
#include "dlrm_shape.h"
#include "foresight/core/context.h"
#include "foresight/core/stopwatch.h"
#include "foresight/kernels/ops.h"

namespace fs = foresight;

namespace {

fs::Tensor Filled(int64_t r, int64_t c) {
  fs::Tensor t = fs::Tensor::Empty({r, c}, fs::DType::kF32);
  float* p = t.data<float>();
  for (int64_t i = 0; i < r * c; ++i) p[i] = static_cast<float>(i % 17) * 0.01f - 0.08f;
  return t;
}

// Best wall seconds of `reps` runs of fn after one warm-up, and the mean
// CPU seconds of a run (the process's, all threads; see cpu_window.h for
// why not the best run's).
template <typename Fn>
std::pair<double, double> Best(int reps, Fn fn) {
  double best = 1e30;
  for (int r = 0; r <= reps; ++r) {
    fs::Stopwatch sw;
    fn();
    const double t = sw.Lap();
    if (r > 0) best = std::min(best, t);
  }
  return {best, fs::bench::MeanCpuSecondsOverWindow(fn, reps)};
}

struct Product {
  std::string name;
  int64_t m, n, k, count;  // `count` products of m x n x k (per sample: count = B)
  double best_s = 0, best_cpu_s = 0;
  std::string via = "gemm";  // how the best time was had: kernels::Gemm, or one batched matmul
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                                static_cast<double>(count); }
};

// c [m, n] = op(a) op(b), k the inner size; the layout of each operand as
// the step has it (trans flags say which are read transposed).
std::pair<double, double> TimeGemm(const fs::ExecContext& ctx, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                                   int reps) {
  fs::Tensor a = ta ? Filled(k, m) : Filled(m, k);
  fs::Tensor b = tb ? Filled(n, k) : Filled(k, n);
  fs::Tensor c = fs::Tensor::Empty({m, n}, fs::DType::kF32);
  return Best(reps, [&] {
    const fs::Status s = fs::kernels::Gemm(ctx, a, ta, b, tb, 1.0f, 0.0f, &c);
    if (!s.ok()) {
      std::fprintf(stderr, "dlrm_gemm_floor: %s\n", s.ToString().c_str());
      std::exit(1);
    }
  });
}

// `batch` independent products of [m, k] x op([.., ..]) -> [m, n], one
// Gemm call each, samples in chunks over the pool.
std::pair<double, double> TimePerSample(const fs::ExecContext& ctx, int64_t batch, int64_t m, int64_t n, int64_t k,
                                        bool tb, int reps) {
  std::vector<fs::Tensor> a(static_cast<size_t>(batch)), b(static_cast<size_t>(batch)), c(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) {
    a[i] = Filled(m, k);
    b[i] = tb ? Filled(n, k) : Filled(k, n);
    c[i] = fs::Tensor::Empty({m, n}, fs::DType::kF32);
  }
  return Best(reps, [&] {
    ctx.pool->ParallelFor(batch, 64, [&](int64_t s0, int64_t s1) {
      for (int64_t i = s0; i < s1; ++i) {
        const fs::Status s = fs::kernels::Gemm(ctx, a[i], false, b[i], tb, 1.0f, 0.0f, &c[i]);
        if (!s.ok()) std::abort();
      }
    });
  });
}

}  // namespace

int main(int argc, char** argv) {
  fs::bench::DlrmShape shape;
  if (!fs::bench::ParseDlrmShape(argc, argv, "dlrm_gemm_floor", &shape)) return 2;
  const int64_t batch = shape.batch, dense = shape.dense, tables = shape.tables, dim = shape.dim;
  const std::vector<int64_t>& bottom = shape.bottom;
  const std::vector<int64_t>& top = shape.top;
  const int threads = shape.threads, reps = shape.reps;
  fs::ThreadPool pool(threads);
  const fs::ExecContext ctx = fs::CpuContext(0, &pool);

  std::vector<Product> mlp;
  auto add_mlp = [&](const std::string& tag, int64_t in, const std::vector<int64_t>& outs, bool first_is_data) {
    for (size_t l = 0; l < outs.size(); ++l) {
      const int64_t out = outs[l];
      const std::string name = tag + std::to_string(l);
      Product f{name + "_fwd", batch, out, in, 1};
      std::tie(f.best_s, f.best_cpu_s) = TimeGemm(ctx, batch, out, in, false, false, reps);  // x W
      mlp.push_back(f);
      if (!(first_is_data && l == 0)) {
        Product dx{name + "_dx", batch, in, out, 1};
        std::tie(dx.best_s, dx.best_cpu_s) = TimeGemm(ctx, batch, in, out, false, true, reps);  // dy W^T
        mlp.push_back(dx);
      }
      Product dw{name + "_dw", in, out, batch, 1};
      std::tie(dw.best_s, dw.best_cpu_s) = TimeGemm(ctx, in, out, batch, true, false, reps);  // x^T dy
      mlp.push_back(dw);
      in = out;
    }
  };
  add_mlp("bottom", dense, bottom, true);
  const int64_t f = tables + 1;
  add_mlp("top", dim + f * (f - 1) / 2, top, false);

  // The interaction's products at the better of one Gemm a sample and one
  // batched matmul over the batch (batched_matmul.h: oneDNN's per-call
  // cost is no work the step has to do); the batched call's CPU is taken
  // as its team's, threads x wall.
  std::vector<Product> inter;
  auto add_inter = [&](const char* name, int64_t m, int64_t n, int64_t k, bool trans_b) {
    Product p{name, m, n, k, batch};
    std::tie(p.best_s, p.best_cpu_s) = TimePerSample(ctx, batch, m, n, k, trans_b, reps);
    const double batched = fs::bench::BestBatchedMatmulSeconds(batch, m, n, k, trans_b, threads, reps);
    if (batched > 0 && batched < p.best_s) {
      p.best_s = batched;
      p.best_cpu_s = batched * threads;
      p.via = "batched_matmul";
    }
    inter.push_back(p);
  };
  add_inter("interaction_fwd", f, f, dim, true);   // Z Z^T per sample
  add_inter("interaction_dz", f, dim, f, false);  // (G + G^T) Z per sample

  double mlp_s = 0, mlp_flops = 0, inter_s = 0, inter_flops = 0, cpu_s = 0;
  std::string parts;
  for (const std::vector<Product>* group : {&mlp, &inter}) {
    for (const Product& p : *group) {
      (group == &mlp ? mlp_s : inter_s) += p.best_s;
      cpu_s += p.best_cpu_s;
      (group == &mlp ? mlp_flops : inter_flops) += p.flops();
      char buf[320];
      std::snprintf(buf, sizeof(buf), "%s{\"name\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,\"count\":%lld,"
                    "\"ms\":%.4f,\"cpu_ms\":%.4f,\"gflops\":%.1f,\"via\":\"%s\"}",
                    parts.empty() ? "" : ",", p.name.c_str(), static_cast<long long>(p.m),
                    static_cast<long long>(p.n), static_cast<long long>(p.k), static_cast<long long>(p.count),
                    p.best_s * 1e3, p.best_cpu_s * 1e3, p.flops() / p.best_s * 1e-9, p.via.c_str());
      parts += buf;
    }
  }
  const double step_s = mlp_s + inter_s;
  std::printf(
      "{\"bench\":\"dlrm_gemm_floor\",\"batch\":%lld,\"threads\":%d,\"reps\":%d,\"mlp_gflop_per_step\":%.4f,"
      "\"interaction_gflop_per_step\":%.4f,\"mlp_gemm_ms\":%.3f,\"interaction_gemm_ms\":%.3f,\"step_gemm_ms\":%.3f,"
      "\"mlp_gflops\":%.1f,\"interaction_gflops\":%.1f,\"mlp_gemm_floor_samples_per_s\":%.0f,"
      "\"step_gemm_floor_samples_per_s\":%.0f,\"step_gemm_cpu_ms\":%.3f,\"products\":[%s]}\n",
      static_cast<long long>(batch), threads, reps, mlp_flops * 1e-9, inter_flops * 1e-9, mlp_s * 1e3, inter_s * 1e3,
      step_s * 1e3, mlp_flops / mlp_s * 1e-9, inter_flops / inter_s * 1e-9, static_cast<double>(batch) / mlp_s,
      static_cast<double>(batch) / step_s, cpu_s * 1e3, parts.c_str());
  return 0;
}
