// The DLRM step's Linear forwards two ways, alternated round by round
// (issue 12, session 17): the product then a separate bias (+ ReLU) pass
// over y (Gemm with beta 0, then AddBias / AddBiasRelu: main before
// session 17), against GemmBias (the bias and ReLU on each tile of y as it
// leaves BLAS). Both give the same bits (checked here once per layer).
// With --backward (session 18), the step's four backward products into a
// ReLU (the dX of every layer whose input is the ReLU output of the layer
// below: top2 -> top1, top1 -> top0, bottom2 -> bottom1, bottom1 -> bottom0)
// the same two ways: Gemm (dY W^T, beta 0) then ReluBackwardSumRows (the
// mask and the lower layer's bias gradient: main before session 18),
// against GemmReluBackward (both on each tile of dY W^T). Same bits checked.
// Per round: each path's CPU ms for all those products of one step (the
// mean over >= 0.25 s of back-to-back runs, cpu_window.h) and its best wall
// ms of --reps runs; the summary gives fused / separate by median.
//
// Usage: linear_epilogue_bench [--rounds 5] [--backward] and dlrm_shape.h's flags
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
  bool relu = false;
  // --backward: dY of this layer, and into the layer below's ReLU (when
  // this layer's input is one): its output y_below as the mask, dY W^T
  // (the separate path's product), grad_z and the lower bias's gradient.
  fs::Tensor gy, y_below, product, gz, gb;
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

void Separate(const fs::ExecContext& ctx, std::vector<Layer>& layers, bool backward) {
  for (Layer& l : layers) {
    if (backward) {
      if (!l.y_below.defined()) continue;
      Check(fs::kernels::Gemm(ctx, l.gy, false, l.w, true, 1.0f, 0.0f, &l.product));
      Check(fs::kernels::ReluBackwardSumRows(ctx, l.y_below, l.product, &l.gz, &l.gb));
      continue;
    }
    Check(fs::kernels::Gemm(ctx, l.x, false, l.w, false, 1.0f, 0.0f, &l.y));
    Check(l.relu ? fs::kernels::AddBiasRelu(ctx, l.y, l.bias, &l.y) : fs::kernels::AddBias(ctx, l.y, l.bias, &l.y));
  }
}

void Fused(const fs::ExecContext& ctx, std::vector<Layer>& layers, bool backward) {
  for (Layer& l : layers) {
    if (!backward) {
      Check(fs::kernels::GemmBias(ctx, l.x, l.w, l.bias, l.relu, &l.y));
    } else if (l.y_below.defined()) {
      Check(fs::kernels::GemmReluBackward(ctx, l.gy, l.w, l.y_below, &l.gz, &l.gb));
    }
  }
}

bool SameBits(const fs::Tensor& a, const fs::Tensor& b) {
  return std::memcmp(a.data<float>(), b.data<float>(), a.numel() * sizeof(float)) == 0;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  bool backward = false;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--backward") == 0) {
      backward = true;
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
  auto add = [&](int64_t out, bool relu, bool input_is_relu) {
    Layer l;
    l.x = Filled(shape.batch, in, salt);
    l.w = Filled(in, out, salt + 1);
    l.bias = Filled(1, out, salt + 2).Reshape({out}).value();
    l.y = fs::Tensor::Empty({shape.batch, out}, fs::DType::kF32);
    l.relu = relu;
    if (input_is_relu) {
      l.gy = Filled(shape.batch, out, salt + 3);
      l.y_below = Filled(shape.batch, in, salt + 4);  // about half its values <= 0: the mask cuts them
      l.product = fs::Tensor::Empty({shape.batch, in}, fs::DType::kF32);
      l.gz = fs::Tensor::Empty({shape.batch, in}, fs::DType::kF32);
      l.gb = fs::Tensor::Empty({in}, fs::DType::kF32);
    }
    layers.push_back(l);
    salt += 5;
    in = out;
  };
  for (size_t i = 0; i < shape.bottom.size(); ++i) add(shape.bottom[i], true, i > 0);
  in = shape.dim + (shape.tables + 1) * shape.tables / 2;
  for (size_t i = 0; i < shape.top.size(); ++i) add(shape.top[i], i + 1 < shape.top.size(), i > 0);

  // Same bits, layer by layer.
  for (Layer& l : layers) {
    if (backward) {
      if (!l.y_below.defined()) continue;
      fs::Tensor want = fs::Tensor::Empty(l.gz.shape(), fs::DType::kF32);
      fs::Tensor want_b = fs::Tensor::Empty(l.gb.shape(), fs::DType::kF32);
      Check(fs::kernels::Gemm(ctx, l.gy, false, l.w, true, 1.0f, 0.0f, &l.product));
      Check(fs::kernels::ReluBackwardSumRows(ctx, l.y_below, l.product, &want, &want_b));
      Check(fs::kernels::GemmReluBackward(ctx, l.gy, l.w, l.y_below, &l.gz, &l.gb));
      if (!SameBits(want, l.gz) || !SameBits(want_b, l.gb)) {
        std::fprintf(stderr,
                     "linear_epilogue_bench: GemmReluBackward differs from Gemm + ReluBackwardSumRows at "
                     "[%lld, %lld]\n",
                     static_cast<long long>(l.gy.size(1)), static_cast<long long>(l.gz.size(1)));
        return 1;
      }
      continue;
    }
    fs::Tensor want = fs::Tensor::Empty(l.y.shape(), fs::DType::kF32);
    Check(fs::kernels::Gemm(ctx, l.x, false, l.w, false, 1.0f, 0.0f, &want));
    Check(l.relu ? fs::kernels::AddBiasRelu(ctx, want, l.bias, &want) : fs::kernels::AddBias(ctx, want, l.bias, &want));
    Check(fs::kernels::GemmBias(ctx, l.x, l.w, l.bias, l.relu, &l.y));
    if (!SameBits(want, l.y)) {
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
  const char* name = backward ? "linear_epilogue_backward" : "linear_epilogue";
  size_t products = 0;  // timed a path
  for (const Layer& l : layers) products += !backward || l.y_below.defined();
  std::vector<double> cpu_ratio, wall_ratio;
  for (int round = 1; round <= rounds; ++round) {
    const double sep_cpu = fs::bench::MeanCpuSecondsOverWindow([&] { Separate(ctx, layers, backward); }, shape.reps) * 1e3;
    const double fused_cpu = fs::bench::MeanCpuSecondsOverWindow([&] { Fused(ctx, layers, backward); }, shape.reps) * 1e3;
    const double sep_wall = best_wall_ms([&] { Separate(ctx, layers, backward); });
    const double fused_wall = best_wall_ms([&] { Fused(ctx, layers, backward); });
    cpu_ratio.push_back(fused_cpu / sep_cpu);
    wall_ratio.push_back(fused_wall / sep_wall);
    std::printf("{\"bench\": \"%s\", \"round\": %d, \"separate_cpu_ms\": %.3f, \"fused_cpu_ms\": %.3f, "
                "\"separate_best_wall_ms\": %.3f, \"fused_best_wall_ms\": %.3f}\n",
                name, round, sep_cpu, fused_cpu, sep_wall, fused_wall);
  }
  std::printf("{\"bench\": \"%s\", \"summary\": true, \"products\": %zu, \"batch\": %lld, \"threads\": %d, "
              "\"same_bits\": true, \"fused_over_separate_cpu\": %.3f, \"fused_over_separate_wall\": %.3f}\n",
              name, products, static_cast<long long>(shape.batch), shape.threads, Median(cpu_ratio),
              Median(wall_ratio));
  return 0;
}
