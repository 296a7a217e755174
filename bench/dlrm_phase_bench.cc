// The DLRM step's dense phases, each against its own floor (issue 12):
// every kernel the trainer's dense step calls (trainer/src/dlrm_model.cc,
// autograd's LinearReluChain, FeatureInteraction, BCE, SGD), at the
// issue's speed shape, on synthetic tensors. The embedding bags are
// embedding_bench's (its floor: the random row-gather rate).
//
// Per phase, the best wall seconds of --reps runs after a warm-up (the
// phases interleaved, as in a step), the mean CPU seconds (the process's,
// all threads) of back-to-back runs over 0.25 s after that (cpu_window.h:
// the best of single runs undercounts the pool worker), and a floor:
//   gemm                    the MLPs' 16 products as the step runs them:
//                           the forwards as GemmBias (bias and ReLU on each
//                           tile), the dX of each layer whose input is a
//                           ReLU output as GemmReluBackward (that ReLU's
//                           mask and bias gradient on each tile), the rest
//                           as Gemm; floor: gemm_products
//   gemm_products           the same 16 products as plain Gemm calls (x W,
//                           dY W^T, X^T dY): the step's GEMM floor
//   relu_bwd_bias_grad      the bias/ReLU backward passes the step still
//                           runs on their own: ReluBackwardSumRows on the
//                           bottom MLP's last layer (its gradient comes from
//                           the interaction) + SumRows on the logit; floor:
//                           its bytes at this machine's streaming read+write
//                           rate at that working set
//   bias_relu_fwd           (not in the step since session 17: GemmBias)
//                           AddBiasRelu on the ReLU layers + AddBias on the
//                           logit; floor: bytes
//   unfused_fwd, unfused_bwd  the passes before any fusion (AddBias,
//                           Activate; ActivateBackward, SumRows on every
//                           layer), timed alongside
//   interaction_fwd / _bwd  the dot interaction; floor: its products as
//                           per-sample sgemm calls (dlrm_gemm_floor's
//                           interaction floor) or its bytes, the larger
//   bce                     BCE with logits and its gradient; floor: bytes
//   sgd                     the dense SGD step over every MLP parameter;
//                           floor: bytes (read w and g, write w)
// Prints one JSON line; ratio = phase seconds / floor seconds, and
// gemm_over_products_cpu = gemm / gemm_products in CPU ms: what the bias and
// ReLU epilogues add to the plain products (linear_epilogue_bench times
// each kind of fused product against its separate passes, alternated).
// Until session 18 the line had fused_over_unfused, (bias_relu_fwd +
// relu_bwd_bias_grad) / (unfused_fwd + unfused_bwd) in best wall ms, when
// both were separate passes over every layer; the step runs neither now.
//
// Usage: dlrm_phase_bench [--batch 2048] [--dense 13] [--tables 26]
//   [--dim 64] [--bottom 512,256,64] [--top 512,256,1] [--threads 2]
//   [--reps 20]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cpu_window.h"
#include "dlrm_shape.h"
#include "batched_matmul.h"
#include "floors.h"
#include "foresight/autograd/optimizer.h"
#include "foresight/autograd/tape.h"
#include "foresight/core/context.h"
#include "foresight/core/stopwatch.h"
#include "foresight/kernels/blas_info.h"
#include "foresight/kernels/ops.h"

namespace fs = foresight;
namespace k = foresight::kernels;

namespace {

fs::Tensor Filled(const fs::Shape& shape, uint64_t salt) {
  fs::Tensor t = fs::Tensor::Empty(shape, fs::DType::kF32);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    p[i] = static_cast<float>((static_cast<uint64_t>(i) * 2654435761u + salt) % 1000) * 1e-3f - 0.5f;
  }
  return t;
}

void Check(const fs::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "dlrm_phase_bench: %s\n", s.ToString().c_str());
    std::exit(1);
  }
}

struct Phase {
  explicit Phase(const char* n) : name(n) {}
  std::string name;
  double bytes = 0;      // moved once per step
  double floor_s = 0;    // this phase's floor
  std::string floor_of;  // what the floor is
  double best_s = 1e30, cpu_s = 0;
  std::function<void()> run;  // the phase, kept for its CPU window
};

template <typename Fn>
void Time(Phase* p, Fn fn) {
  fs::Stopwatch sw;
  fn();
  p->best_s = std::min(p->best_s, sw.Lap());
  if (!p->run) p->run = fn;
}

}  // namespace

int main(int argc, char** argv) {
  fs::bench::DlrmShape shape;
  if (!fs::bench::ParseDlrmShape(argc, argv, "dlrm_phase_bench", &shape)) return 2;
  const int64_t batch = shape.batch, dense = shape.dense, tables = shape.tables, dim = shape.dim;
  const std::vector<int64_t>& bottom = shape.bottom;
  const std::vector<int64_t>& top = shape.top;
  const int threads = shape.threads, reps = shape.reps;
  if (top.back() != 1) {
    std::fprintf(stderr, "dlrm_phase_bench: --top must end with 1\n");
    return 2;
  }
  fs::ThreadPool pool(threads);
  const fs::ExecContext ctx = fs::CpuContext(0, &pool);
  const float kF = static_cast<float>(sizeof(float));

  // The layers: (in, out, relu) in step order.
  struct Layer {
    int64_t in = 0, out = 0;
    bool relu = false, first = false;
    // relu_below: x is the ReLU output of the layer before (in the same
    // MLP), so the step takes that ReLU's backward in this layer's dX.
    bool relu_below = false;
    fs::Tensor x, w, b, y, gy, gz, gx, gw, gb, gb_below;
  };
  auto make_layer = [](int64_t in, int64_t out, bool relu, bool first, bool relu_below) {
    Layer l;
    l.in = in, l.out = out, l.relu = relu, l.first = first, l.relu_below = relu_below;
    return l;
  };
  std::vector<Layer> layers;
  int64_t in = dense;
  for (size_t i = 0; i < bottom.size(); ++i) {
    layers.push_back(make_layer(in, bottom[i], true, i == 0, i > 0));
    in = bottom[i];
  }
  const int64_t f = tables + 1;
  in = k::InteractionWidth(k::Interaction::kDot, tables, dim, dim);
  for (size_t i = 0; i < top.size(); ++i) {
    layers.push_back(make_layer(in, top[i], i + 1 < top.size(), false, i > 0));
    in = top[i];
  }
  uint64_t salt = 1;
  std::vector<std::unique_ptr<fs::autograd::Parameter>> params;
  std::vector<fs::autograd::Parameter*> param_ptrs;
  for (Layer& l : layers) {
    l.x = Filled({batch, l.in}, salt++);
    l.w = Filled({l.in, l.out}, salt++);
    l.b = Filled({l.out}, salt++);
    l.y = fs::Tensor::Empty({batch, l.out}, fs::DType::kF32);
    l.gy = Filled({batch, l.out}, salt++);
    l.gz = Filled({batch, l.out}, salt++);  // dY of the products (the bwd phase rewrites some)
    l.gx = fs::Tensor::Empty({batch, l.in}, fs::DType::kF32);
    l.gw = fs::Tensor::Empty({l.in, l.out}, fs::DType::kF32);
    l.gb = fs::Tensor::Empty({l.out}, fs::DType::kF32);
    l.gb_below = fs::Tensor::Empty({l.in}, fs::DType::kF32);
    for (const auto& [name, t, g] : {std::tuple{"w", l.w, l.gw}, std::tuple{"b", l.b, l.gb}}) {
      params.push_back(std::make_unique<fs::autograd::Parameter>(name, t.Clone()));
      params.back()->mutable_grad() = g;
      param_ptrs.push_back(params.back().get());
    }
  }
  fs::Tensor zx = Filled({batch, dim}, salt++), emb = Filled({batch, tables * dim}, salt++);
  fs::Tensor inter = fs::Tensor::Empty({batch, layers[bottom.size()].in}, fs::DType::kF32);
  fs::Tensor ginter = Filled(inter.shape(), salt++);
  fs::Tensor gzx = fs::Tensor::Empty(zx.shape(), fs::DType::kF32), gemb = fs::Tensor::Empty(emb.shape(), fs::DType::kF32);
  fs::Tensor logits = Filled({batch, 1}, salt++), glogits = fs::Tensor::Empty({batch, 1}, fs::DType::kF32);
  fs::Tensor targets = fs::Tensor::Empty({batch}, fs::DType::kF32);
  for (int64_t i = 0; i < batch; ++i) targets.data<float>()[i] = static_cast<float>(i % 4 == 0);
  fs::autograd::OptimizerOptions oo;
  oo.kind = "sgd";
  oo.lr = 1e-9f;  // the weights barely move over the reps
  auto sgd = fs::autograd::Optimizer::Create(oo, param_ptrs);
  Check(sgd.status());

  // Per-sample interaction products, one Gemm each over the pool (as
  // dlrm_gemm_floor times them): the interaction's compute floor.
  std::vector<fs::Tensor> za(static_cast<size_t>(batch)), zc(static_cast<size_t>(batch)),
      zd(static_cast<size_t>(batch));
  for (int64_t i = 0; i < batch; ++i) {
    za[i] = Filled({f, dim}, salt + i);
    zc[i] = fs::Tensor::Empty({f, f}, fs::DType::kF32);
    zd[i] = fs::Tensor::Empty({f, dim}, fs::DType::kF32);
  }
  auto per_sample = [&](bool backward) {
    pool.ParallelFor(batch, 64, [&](int64_t s0, int64_t s1) {
      for (int64_t i = s0; i < s1; ++i) {
        if (backward) {
          Check(k::Gemm(ctx, zc[i], false, za[i], false, 1.0f, 0.0f, &zd[i]));  // (G + G^T) Z
        } else {
          Check(k::Gemm(ctx, za[i], false, za[i], true, 1.0f, 0.0f, &zc[i]));  // Z Z^T
        }
      }
    });
  };

  Phase gemm("gemm"), gemm_plain("gemm_products"), fwd("bias_relu_fwd"), bwd("relu_bwd_bias_grad"), ufwd("unfused_fwd"), ubwd("unfused_bwd"),
      ifwd("interaction_fwd"), ibwd("interaction_bwd"), bce("bce"), step("sgd"), ifwd_floor("interaction_fwd_gemms"),
      ibwd_floor("interaction_bwd_gemms");
  // Whether the step runs layer i's bias/ReLU backward as a pass of its
  // own: not when the next layer takes its ReLU's backward in its dX.
  auto separate_bwd = [&](size_t i) { return i + 1 >= layers.size() || !layers[i + 1].relu_below; };
  double params_n = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    fwd.bytes += 2.0 * kF * static_cast<double>(batch * l.out);
    const double pass_bytes = (l.relu ? 3.0 : 1.0) * kF * static_cast<double>(batch * l.out);
    ubwd.bytes += pass_bytes;
    if (separate_bwd(i)) bwd.bytes += pass_bytes;
    params_n += static_cast<double>(l.in * l.out + l.out);
  }
  ufwd.bytes = fwd.bytes;
  ifwd.bytes = kF * static_cast<double>(zx.numel() + emb.numel() + inter.numel());
  ibwd.bytes = kF * static_cast<double>(zx.numel() + emb.numel() + ginter.numel() + gzx.numel() + gemb.numel());
  bce.bytes = kF * 3.0 * static_cast<double>(batch);
  step.bytes = kF * 3.0 * params_n;

  for (int r = 0; r <= reps; ++r) {
    Time(&gemm, [&] {
      for (Layer& l : layers) {
        Check(k::GemmBias(ctx, l.x, l.w, l.b, l.relu, &l.y));
        if (l.relu_below) {
          Check(k::GemmReluBackward(ctx, l.gz, l.w, l.x, &l.gx, &l.gb_below));
        } else if (!l.first) {
          Check(k::Gemm(ctx, l.gz, false, l.w, true, 1.0f, 0.0f, &l.gx));
        }
        Check(k::Gemm(ctx, l.x, true, l.gz, false, 1.0f, 0.0f, &l.gw));
      }
    });
    Time(&gemm_plain, [&] {
      for (Layer& l : layers) {
        Check(k::Gemm(ctx, l.x, false, l.w, false, 1.0f, 0.0f, &l.y));
        if (!l.first) Check(k::Gemm(ctx, l.gz, false, l.w, true, 1.0f, 0.0f, &l.gx));
        Check(k::Gemm(ctx, l.x, true, l.gz, false, 1.0f, 0.0f, &l.gw));
      }
    });
    Time(&fwd, [&] {
      for (Layer& l : layers) Check(l.relu ? k::AddBiasRelu(ctx, l.y, l.b, &l.y) : k::AddBias(ctx, l.y, l.b, &l.y));
    });
    Time(&bwd, [&] {
      for (size_t i = 0; i < layers.size(); ++i) {
        Layer& l = layers[i];
        if (!separate_bwd(i)) continue;
        Check(l.relu ? k::ReluBackwardSumRows(ctx, l.y, l.gy, &l.gz, &l.gb) : k::SumRows(ctx, l.gy, &l.gb));
      }
    });
    Time(&ufwd, [&] {
      for (Layer& l : layers) {
        Check(k::AddBias(ctx, l.y, l.b, &l.y));
        if (l.relu) Check(k::Activate(ctx, k::Activation::kRelu, 0.0f, l.y, &l.gz));
      }
    });
    Time(&ubwd, [&] {
      for (Layer& l : layers) {
        if (l.relu) Check(k::ActivateBackward(ctx, k::Activation::kRelu, 0.0f, l.y, l.gy, &l.gz));
        Check(k::SumRows(ctx, l.relu ? l.gz : l.gy, &l.gb));
      }
    });
    Time(&ifwd, [&] { Check(k::FeatureInteraction(ctx, k::Interaction::kDot, tables, zx, emb, &inter)); });
    Time(&ibwd, [&] {
      Check(k::FeatureInteractionBackward(ctx, k::Interaction::kDot, tables, zx, emb, ginter, &gzx, &gemb));
    });
    Time(&ifwd_floor, [&] { per_sample(false); });
    Time(&ibwd_floor, [&] { per_sample(true); });
    Time(&bce, [&] {
      float loss = 0;
      Check(k::BceWithLogits(ctx, logits, targets, &loss, &glogits));
    });
    Time(&step, [&] { Check((*sgd)->Step(ctx)); });
    if (r == 0) {  // the warm-up is not timed
      for (Phase* p : {&gemm, &gemm_plain, &fwd, &bwd, &ufwd, &ubwd, &ifwd, &ibwd, &ifwd_floor, &ibwd_floor, &bce, &step}) {
        p->best_s = 1e30;
      }
    }
  }
  for (Phase* p : {&fwd, &bwd, &ufwd, &ubwd, &ifwd, &ibwd, &ifwd_floor, &ibwd_floor, &bce, &step}) {
    p->cpu_s = fs::bench::MeanCpuSecondsOverWindow(p->run, reps);
  }
  // gemm against gemm_products differs by the epilogues only, a few percent:
  // their CPU windows alternate five times and each takes its median (one
  // window each, minutes apart on a loaded host, read 0.98-1.14).
  std::vector<double> gemm_cpu, plain_cpu;
  for (int i = 0; i < 5; ++i) {
    gemm_cpu.push_back(fs::bench::MeanCpuSecondsOverWindow(gemm.run, reps));
    plain_cpu.push_back(fs::bench::MeanCpuSecondsOverWindow(gemm_plain.run, reps));
  }
  for (std::vector<double>* v : {&gemm_cpu, &plain_cpu}) std::sort(v->begin(), v->end());
  gemm.cpu_s = gemm_cpu[2];
  gemm_plain.cpu_s = plain_cpu[2];

  // Streaming floors at each phase's working set.
  fs::bench::FloorOptions fo;
  fo.pool = &pool;
  fo.reps = std::max(3, reps / 4);
  auto stream_floor = [&](Phase* p) {
    p->floor_s = p->bytes / fs::bench::StreamReadWriteRate(fo, static_cast<int64_t>(p->bytes));
    p->floor_of = "bytes";
  };
  for (Phase* p : {&fwd, &bwd, &ufwd, &ubwd, &bce, &step}) stream_floor(p);
  // The interaction's products at the better of one sgemm a sample and one
  // oneDNN batched matmul (batched_matmul.h), as dlrm_gemm_floor takes them.
  const double batched_fwd = fs::bench::BestBatchedMatmulSeconds(batch, f, f, dim, true, threads, reps);
  const double batched_bwd = fs::bench::BestBatchedMatmulSeconds(batch, f, dim, f, false, threads, reps);
  for (auto [p, gemms, batched] : {std::tuple{&ifwd, &ifwd_floor, batched_fwd}, std::tuple{&ibwd, &ibwd_floor,
                                                                                          batched_bwd}}) {
    stream_floor(p);
    const bool use_batched = batched > 0 && batched < gemms->best_s;
    const double products_s = use_batched ? batched : gemms->best_s;
    if (products_s > p->floor_s) {
      p->floor_s = products_s;
      p->floor_of = use_batched ? "batched_matmul" : "per_sample_sgemm";
    }
  }
  gemm.floor_s = gemm_plain.best_s;
  gemm.floor_of = "gemm_products";
  gemm_plain.floor_s = gemm_plain.best_s;
  gemm_plain.floor_of = "itself";

  std::string parts;
  double non_gemm_s = 0, non_gemm_floor_s = 0;
  for (Phase* p : {&gemm, &bwd, &ifwd, &ibwd, &bce, &step, &gemm_plain, &fwd, &ufwd, &ubwd}) {
    const bool in_step = p != &gemm_plain && p != &fwd && p != &ufwd && p != &ubwd;
    if (in_step && p != &gemm) {
      non_gemm_s += p->best_s;
      non_gemm_floor_s += p->floor_s;
    }
    char buf[384];
    std::snprintf(buf, sizeof(buf),
                  "%s{\"name\":\"%s\",\"in_step\":%s,\"ms\":%.4f,\"cpu_ms\":%.4f,\"bytes\":%.0f,\"floor_ms\":%.4f,"
                  "\"floor_of\":\"%s\",\"ratio\":%.3f}",
                  parts.empty() ? "" : ",", p->name.c_str(), in_step ? "true" : "false", p->best_s * 1e3,
                  p->cpu_s * 1e3, p->bytes, p->floor_s * 1e3, p->floor_of.c_str(), p->best_s / p->floor_s);
    parts += buf;
  }
  std::printf(
      "{\"bench\":\"dlrm_phase_bench\",\"batch\":%lld,\"threads\":%d,\"reps\":%d,\"blas\":\"%s\",\"gemm_ms\":%.3f,"
      "\"gemm_products_ms\":%.3f,\"dense_non_gemm_ms\":%.3f,\"dense_non_gemm_floor_ms\":%.3f,"
      "\"gemm_over_products_cpu\":%.3f,\"phases\":[%s]}\n",
      static_cast<long long>(batch), threads, reps, k::BlasDescription().c_str(), gemm.best_s * 1e3,
      gemm_plain.best_s * 1e3, non_gemm_s * 1e3, non_gemm_floor_s * 1e3, gemm.cpu_s / gemm_plain.cpu_s,
      parts.c_str());
  return 0;
}
