// The DLRM step's Linear forwards two ways, alternated round by round
// (issue 12, session 17): the product then a separate bias (+ ReLU) pass
// over y (Gemm with beta 0, then AddBias / AddBiasRelu: main before
// session 17), against GemmBias (the bias and ReLU on each tile of y as it
// leaves BLAS). Both give the same bits (checked here once per layer).
// Per round: each path's CPU ms for all the forward layers of one step (the
// mean over >= 0.25 s of back-to-back runs, cpu_window.h) and its best wall
// ms of --reps runs; the summary gives fused / separate by median.
//
// Usage: linear_epilogue_bench [--rounds 5] and dlrm_shape.h's flags
// (--batch 2048 --dense 13 --tables 26 --dim 64 --bottom 512,256,64
//  --top 512,256,1 --threads 2 --reps 20)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_window.h"
#include "dlrm_shape.h"
#include "foresight/core/context.h"
#include "foresight/core/stopwatch.h"
#include "foresight/kernels/ops.h"

namespace fs = foresight;

namespace {

struct Layer {
  fs::Tensor x, w, bias, y;
  bool relu;
};

fs::Tensor Filled(int64_t r, int64_t c, int salt) {
  fs::Tensor t = fs::Tensor::Empty({r, c}, fs::DType::kF32);
  float* p = t.data<float>();
  for (int64_t i = 0; i < r * c; ++i) p[i] = static_cast<float>((i * 7 + salt) % 17) * 0.01f - 0.08f;
  return t;
}

void Check(const fs::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "linear_epilogue_bench: %s\n", s.ToString().c_str());
    std::exit(1);
  }
}

void Separate(const fs::ExecContext& ctx, std::vector<Layer>& layers) {
  for (Layer& l : layers) {
    Check(fs::kernels::Gemm(ctx, l.x, false, l.w, false, 1.0f, 0.0f, &l.y));
    Check(l.relu ? fs::kernels::AddBiasRelu(ctx, l.y, l.bias, &l.y) : fs::kernels::AddBias(ctx, l.y, l.bias, &l.y));
  }
}

void Fused(const fs::ExecContext& ctx, std::vector<Layer>& layers) {
  for (Layer& l : layers) Check(fs::kernels::GemmBias(ctx, l.x, l.w, l.bias, l.relu, &l.y));
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      rest.push_back(argv[i]);
    }
  }
  fs::bench::DlrmShape shape;
  if (!fs::bench::ParseDlrmShape(static_cast<int>(rest.size()), rest.data(), "linear_epilogue_bench", &shape)) {
    return 2;
  }
  fs::ThreadPool pool(shape.threads);
  const fs::ExecContext ctx = fs::CpuContext(0, &pool);
  // The forward layers: bottom MLP from the dense features, top MLP from
  // the dot interaction's output (dim + tables+1 choose 2 columns); the
  // last top layer has no ReLU.
  std::vector<Layer> layers;
  int64_t in = shape.dense;
  int salt = 0;
  auto add = [&](int64_t out, bool relu) {
    layers.push_back({Filled(shape.batch, in, salt), Filled(in, out, salt + 1), Filled(1, out, salt + 2).Reshape({out}).value(),
                      fs::Tensor::Empty({shape.batch, out}, fs::DType::kF32), relu});
    salt += 3;
    in = out;
  };
  for (int64_t out : shape.bottom) add(out, true);
  in = shape.dim + (shape.tables + 1) * shape.tables / 2;
  for (size_t i = 0; i < shape.top.size(); ++i) add(shape.top[i], i + 1 < shape.top.size());

  // Same bits, layer by layer.
  for (Layer& l : layers) {
    fs::Tensor want = fs::Tensor::Empty(l.y.shape(), fs::DType::kF32);
    Check(fs::kernels::Gemm(ctx, l.x, false, l.w, false, 1.0f, 0.0f, &want));
    Check(l.relu ? fs::kernels::AddBiasRelu(ctx, want, l.bias, &want) : fs::kernels::AddBias(ctx, want, l.bias, &want));
    Check(fs::kernels::GemmBias(ctx, l.x, l.w, l.bias, l.relu, &l.y));
    if (std::memcmp(want.data<float>(), l.y.data<float>(), want.numel() * sizeof(float)) != 0) {
      std::fprintf(stderr, "linear_epilogue_bench: GemmBias differs from Gemm + bias pass at [%lld, %lld]\n",
                   static_cast<long long>(l.x.size(1)), static_cast<long long>(l.y.size(1)));
      return 1;
    }
  }

  auto best_wall_ms = [&](auto fn) {
    double best = 1e30;
    for (int r = 0; r < shape.reps; ++r) {
      fs::Stopwatch sw;
      fn();
      best = std::min(best, sw.Seconds());
    }
    return best * 1e3;
  };
  std::vector<double> cpu_ratio, wall_ratio;
  for (int round = 1; round <= rounds; ++round) {
    const double sep_cpu = fs::bench::MeanCpuSecondsOverWindow([&] { Separate(ctx, layers); }, shape.reps) * 1e3;
    const double fused_cpu = fs::bench::MeanCpuSecondsOverWindow([&] { Fused(ctx, layers); }, shape.reps) * 1e3;
    const double sep_wall = best_wall_ms([&] { Separate(ctx, layers); });
    const double fused_wall = best_wall_ms([&] { Fused(ctx, layers); });
    cpu_ratio.push_back(fused_cpu / sep_cpu);
    wall_ratio.push_back(fused_wall / sep_wall);
    std::printf("{\"bench\": \"linear_epilogue\", \"round\": %d, \"separate_cpu_ms\": %.3f, \"fused_cpu_ms\": %.3f, "
                "\"separate_best_wall_ms\": %.3f, \"fused_best_wall_ms\": %.3f}\n",
                round, sep_cpu, fused_cpu, sep_wall, fused_wall);
  }
  std::printf("{\"bench\": \"linear_epilogue\", \"summary\": true, \"layers\": %zu, \"batch\": %lld, \"threads\": %d, "
              "\"same_bits\": true, \"fused_over_separate_cpu\": %.3f, \"fused_over_separate_wall\": %.3f}\n",
              layers.size(), static_cast<long long>(shape.batch), shape.threads, Median(cpu_ratio),
              Median(wall_ratio));
  return 0;
}
