// One TransformerEncoderLayer on a packed batch of variable-length
// sequences, on the CPU: forward, and forward + backward (loss sum(y * r)),
// timed over repetitions after a warm-up (median), and the activation bytes
// the forward holds for the backward. Prints one JSON line.
//
// Lengths: --lengths a,b,c or, by default, --batch lengths uniform in
// [1, --max-length] from --seed: length i = 1 + SplitMix64(seed + i) mod L
// (bench/transformer_pytorch.py draws the same ones).
//
// peak_activation_bytes: heap bytes in use at the end of the forward (every
// tensor the tape keeps for the backward, and the output) less those in use
// before it (parameters, input). Training's activation memory peaks there.
// Measured through mallinfo2 in a first, untimed step with the host block
// cache's limit at 0 (freed blocks go straight back, so in-use bytes are
// live bytes); the timed steps then run with the cache as training has it.
//
// Usage: transformer_bench --hidden 768 --heads 12 --ffn 3072 --batch 16
//   --max-length 256 --threads 2 [--causal] [--norm-first] [--gelu erf|tanh]
//   [--lengths a,b,c] [--seed 1] [--reps 5] [--warmup 1] [--device cpu]
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "foresight/autograd/transformer.h"
#include "foresight/core/allocator.h"
#include "foresight/core/caching_allocator.h"
#include "foresight/core/context.h"
#include "foresight/core/stopwatch.h"
#include "foresight/kernels/ops.h"

namespace fs = foresight;
namespace ag = foresight::autograd;

namespace {

uint64_t SplitMix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

size_t HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "transformer_bench: %s\nusage: transformer_bench --hidden H --heads A --ffn F --batch B "
               "--max-length L --threads T [--causal] [--norm-first] [--gelu erf|tanh] [--lengths a,b,c] "
               "[--seed S] [--reps N] [--warmup W] [--device cpu]\n",
               why.c_str());
  std::exit(2);
}

int Fail(const fs::Status& s) {
  std::fprintf(stderr, "transformer_bench: %s\n", s.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t hidden = 768, heads = 12, ffn = 3072, batch = 16, max_length = 256, threads = 2, reps = 5, warmup = 1;
  uint64_t seed = 1;
  bool causal = false, norm_first = false;
  std::string gelu = "erf", device = "cpu";
  std::vector<int64_t> lengths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Usage(a + " needs a value");
      return argv[++i];
    };
    auto next_int = [&]() -> int64_t {
      const std::string v = next();
      char* end = nullptr;
      const long long n = std::strtoll(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || n < 0) Usage(a + " expects a non-negative integer, got '" + v + "'");
      return n;
    };
    if (a == "--hidden") hidden = next_int();
    else if (a == "--heads") heads = next_int();
    else if (a == "--ffn") ffn = next_int();
    else if (a == "--batch") batch = next_int();
    else if (a == "--max-length") max_length = next_int();
    else if (a == "--threads") threads = next_int();
    else if (a == "--reps") reps = next_int();
    else if (a == "--warmup") warmup = next_int();
    else if (a == "--seed") seed = static_cast<uint64_t>(next_int());
    else if (a == "--causal") causal = true;
    else if (a == "--norm-first") norm_first = true;
    else if (a == "--gelu") gelu = next();
    else if (a == "--device") device = next();
    else if (a == "--lengths") {
      std::string v = next();
      size_t pos = 0;
      while (pos <= v.size()) {
        const size_t comma = v.find(',', pos);
        const std::string tok = v.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        char* end = nullptr;
        const long long n = std::strtoll(tok.c_str(), &end, 10);
        if (tok.empty() || *end != '\0' || n < 0) Usage("--lengths expects non-negative integers a,b,c, got '" + tok + "'");
        lengths.push_back(n);
        if (comma == std::string::npos) break;
        pos = comma + 1;
      }
    } else {
      Usage("unknown argument " + a);
    }
  }
  if (device != "cpu") Usage("--device " + device + ": this benchmark runs the CPU kernels only so far");
  if (gelu != "erf" && gelu != "tanh") Usage("--gelu must be erf or tanh, got " + gelu);
  if (hidden <= 0 || heads <= 0 || hidden % heads != 0) Usage("--hidden must be a positive multiple of --heads");
  if (threads <= 0 || reps <= 0) Usage("--threads and --reps must be positive");
  if (lengths.empty()) {
    if (max_length <= 0) Usage("--max-length must be positive");
    for (int64_t i = 0; i < batch; ++i) {
      lengths.push_back(1 + static_cast<int64_t>(SplitMix64(seed + static_cast<uint64_t>(i)) %
                                                 static_cast<uint64_t>(max_length)));
    }
  }

  fs::ThreadPool pool(static_cast<int>(threads));
  const fs::ExecContext ctx = fs::CpuContext(seed, &pool);
  auto packed_or = ag::PackedSequences::FromLengths(lengths);
  if (!packed_or.ok()) return Fail(packed_or.status());
  const ag::PackedSequences packed = *packed_or;
  const int64_t tokens = packed.total_tokens();

  ag::TransformerEncoderConfig config;
  config.hidden = hidden;
  config.heads = heads;
  config.ffn = ffn;
  config.causal = causal;
  config.norm_first = norm_first;
  config.gelu = gelu == "erf" ? fs::kernels::GeluForm::kErf : fs::kernels::GeluForm::kTanh;
  ag::TransformerEncoderLayer layer("layer", config, fs::RngKey::FromSeed(seed));

  fs::Tensor x = fs::Tensor::Empty({tokens, hidden}, fs::DType::kF32);
  fs::Tensor r = fs::Tensor::Empty({tokens, hidden}, fs::DType::kF32);
  for (int64_t i = 0; i < tokens * hidden; ++i) {
    x.data<float>()[i] = static_cast<float>(SplitMix64(seed * 7919 + static_cast<uint64_t>(i)) % 2001) / 1000.0f - 1.0f;
    r.data<float>()[i] = static_cast<float>(SplitMix64(seed * 104729 + static_cast<uint64_t>(i)) % 2001) / 1000.0f - 1.0f;
  }
  const ag::Var input(x, /*requires_grad=*/true);

  std::vector<double> fwd_ms, step_ms;
  size_t activation_bytes = 0;
  const size_t cache_limit = fs::HostCache()->stats().limit_bytes;
  fs::HostCache()->SetLimit(0);
  fs::HostCache()->Trim();
  // Steps -2 and -1 measure memory only (-2 warms up: BLAS buffers, pool threads).
  for (int64_t rep = -2; rep < warmup + reps; ++rep) {
    const bool timed = rep >= warmup;
    if (rep == 0) fs::HostCache()->SetLimit(cache_limit);
    if (rep >= 0) {
      fs::Stopwatch sw;
      ag::Tape tape(ctx, /*training=*/true);
      auto y = layer.Forward(tape, input, packed);
      if (!y.ok()) return Fail(y.status());
      if (timed) fwd_ms.push_back(sw.Seconds() * 1e3);
    }
    layer.ZeroGrad();
    {
      const size_t before = HeapInUse();
      fs::Stopwatch sw;
      ag::Tape tape(ctx, /*training=*/true);
      auto y = layer.Forward(tape, input, packed);
      if (!y.ok()) return Fail(y.status());
      if (rep == -1) activation_bytes = HeapInUse() - before;
      // loss = sum(y * r): its gradient with respect to y is r.
      double loss = 0;
      const float* py = y->value().data<float>();
      for (int64_t i = 0; i < tokens * hidden; ++i) loss += static_cast<double>(py[i]) * r.data<float>()[i];
      fs::Tensor lt = fs::Tensor::Empty({1}, fs::DType::kF32);
      lt.data<float>()[0] = static_cast<float>(loss);
      const ag::Var out = *y;
      ag::Var lv = tape.RecordGrad({out}, lt, [out, r](const fs::ExecContext& c, const fs::Tensor&) {
        return out.AccumulateGrad(c, r);
      });
      fs::Status s = tape.Backward(lv);
      if (!s.ok()) return Fail(s);
      if (timed) step_ms.push_back(sw.Seconds() * 1e3);
    }
  }

  std::string lens;
  for (size_t i = 0; i < lengths.size(); ++i) lens += (i ? "," : "") + std::to_string(lengths[i]);
  std::printf(
      "{\"bench\": \"transformer_layer\", \"impl\": \"foresight_packed\", \"hidden\": %lld, \"heads\": %lld, "
      "\"ffn\": %lld, \"batch\": %lld, \"max_length\": %lld, \"max_seqlen\": %lld, \"threads\": %lld, \"causal\": %s, \"norm_first\": %s, "
      "\"gelu\": \"%s\", \"tokens\": %lld, \"padded_tokens\": %lld, \"forward_ms\": %.2f, "
      "\"forward_backward_ms\": %.2f, \"peak_activation_bytes\": %zu, \"reps\": %lld, \"lengths\": [%s]}\n",
      static_cast<long long>(hidden), static_cast<long long>(heads), static_cast<long long>(ffn),
      static_cast<long long>(lengths.size()), static_cast<long long>(max_length),
      static_cast<long long>(packed.max_seqlen()), static_cast<long long>(threads), causal ? "true" : "false", norm_first ? "true" : "false", gelu.c_str(),
      static_cast<long long>(tokens), static_cast<long long>(packed.max_seqlen() * lengths.size()), Median(fwd_ms),
      Median(step_ms), activation_bytes, static_cast<long long>(reps), lens.c_str());
  return 0;
}
