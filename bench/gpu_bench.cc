// Memory-bound CUDA kernels against this GPU's device-to-device copy
// bandwidth, measured in the same run on the same GPU; host-to-device
// copies on the copy stream slot against plain pinned copies. Prints one
// JSON line (or {"error": ...} and exit 2 where no GPU is visible).
//
//   copy_gbps           Tensor::CopyFrom device -> device of --copy-mib MiB,
//                       bytes read + written per second (the floor)
//   gather              GatherRows: --rows of --dim f32 from a table of
//                       --table rows at uniform ids (rows read + written)
//   spmm_sum            Spmm sum over a uniform random graph (--nodes,
//                       --degree, --dim): one source row read per edge (no
//                       reuse assumed), the output written, the CSR read
//   spmm_sum_backward   SpmmBackward sum over its transpose: the same bytes
//   embedding_bag       EmbeddingBagForward, 26 tables, one id per bag,
//                       batch --batch, dim --dim (rows read, output written)
//   h2d_pinned_gbps     pinned host -> device on the compute slot (plain)
//   h2d_copy_slot_gbps  the same on kCopySlot (CopyAsync + event), as the
//                       pipeline's copy stage issues it
// Each kernel's "fraction" is its bytes per second over copy_gbps. Times
// are the best of --reps runs after one warm-up.
//
// Usage: gpu_bench [--device 0] [--rows 1000000] [--table 4000000]
//   [--nodes 1000000] [--degree 20] [--dim 128] [--batch 2048]
//   [--copy-mib 1024] [--reps 10]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/cuda_streams.h"
#include "foresight/core/stopwatch.h"
#include "foresight/kernels/ops.h"

namespace fs = foresight;

namespace {

[[noreturn]] void Fail(const std::string& what, const fs::Status& s) {
  std::printf("{\"error\": \"%s: %s\"}\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

template <typename T>
T Must(fs::StatusOr<T> v, const char* what) {
  if (!v.ok()) Fail(what, v.status());
  return std::move(v).value();
}

void Must(const fs::Status& s, const char* what) {
  if (!s.ok()) Fail(what, s);
}

// Best wall time of `reps` runs of fn (each followed by a device sync).
double Best(fs::Device d, int reps, const std::function<void()>& fn) {
  fn();
  Must(fs::SynchronizeStream(d, fs::kComputeSlot), "sync");
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    fs::Stopwatch w;
    fn();
    Must(fs::SynchronizeStream(d, fs::kComputeSlot), "sync");
    best = std::min(best, w.Seconds());
  }
  return best;
}

fs::Tensor Ids(int64_t n, int64_t hi, uint64_t seed) {
  fs::Tensor t = fs::Tensor::Empty({n}, fs::DType::kI64);
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < n; ++i) t.data<int64_t>()[i] = static_cast<int64_t>(rng() % static_cast<uint64_t>(hi));
  return t;
}

fs::Tensor Filled(fs::Device d, const fs::Shape& shape) {
  fs::Tensor h = fs::Tensor::Empty(shape, fs::DType::kF32);
  for (int64_t i = 0; i < h.numel(); ++i) h.data<float>()[i] = static_cast<float>(i % 1024) * 0.001f;
  return Must(h.To(d), "copy to the device");
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0, reps = 10;
  int64_t rows = 1000000, table = 4000000, nodes = 1000000, degree = 20, dim = 128, batch = 2048, copy_mib = 1024;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const int64_t v = std::atoll(argv[i + 1]);
    if (k == "--device") device = static_cast<int>(v);
    else if (k == "--rows") rows = v;
    else if (k == "--table") table = v;
    else if (k == "--nodes") nodes = v;
    else if (k == "--degree") degree = v;
    else if (k == "--dim") dim = v;
    else if (k == "--batch") batch = v;
    else if (k == "--copy-mib") copy_mib = v;
    else if (k == "--reps") reps = static_cast<int>(v);
    else {
      std::fprintf(stderr, "gpu_bench: unknown option %s\n", k.c_str());
      return 1;
    }
  }
  if (fs::CudaDeviceCount() <= device) {
    std::printf("{\"error\": \"no GPU cuda:%d visible (%d GPUs; CUDA compiled in: %s)\"}\n", device,
                fs::CudaDeviceCount(), fs::CudaCompiledIn() ? "yes" : "no");
    return 2;
  }
  const fs::Device d = fs::Device::Cuda(device);
  fs::ExecContext ctx = fs::CpuContext();
  ctx.device = d;
  const double f4 = 4.0;

  // The floor: device -> device copy, bytes read + written.
  const int64_t copy_n = copy_mib * (int64_t{1} << 20) / 4;
  fs::Tensor src = Must(fs::Tensor::EmptyOn(d, {copy_n}, fs::DType::kF32), "alloc");
  fs::Tensor dst = Must(fs::Tensor::EmptyOn(d, {copy_n}, fs::DType::kF32), "alloc");
  Must(src.ZeroFill(), "fill");
  const double t_copy = Best(d, reps, [&] { Must(dst.CopyFrom(src), "copy"); });
  const double copy_gbps = 2.0 * f4 * static_cast<double>(copy_n) / t_copy / 1e9;
  src = fs::Tensor();
  dst = fs::Tensor();

  // Gather.
  fs::Tensor tab = Filled(d, {table, dim});
  fs::Tensor gids = Must(Ids(rows, table, 1).To(d), "ids");
  fs::Tensor gout = Must(fs::Tensor::EmptyOn(d, {rows, dim}, fs::DType::kF32), "alloc");
  const double t_gather = Best(d, reps, [&] { Must(fs::kernels::GatherRows(ctx, tab, gids, &gout), "gather"); });
  const double gather_bytes = 2.0 * f4 * static_cast<double>(rows * dim) + 8.0 * static_cast<double>(rows);
  tab = fs::Tensor();
  gout = fs::Tensor();

  // SpMM sum forward and backward on a uniform random graph.
  const int64_t edges = nodes * degree;
  fs::Tensor indptr = fs::Tensor::Empty({nodes + 1}, fs::DType::kI64);
  for (int64_t v = 0; v <= nodes; ++v) indptr.data<int64_t>()[v] = v * degree;
  fs::kernels::Csr csr;
  csr.indptr = Must(indptr.To(d), "indptr");
  csr.indices = Must(Ids(edges, nodes, 2).To(d), "indices");
  csr.num_src = nodes;
  fs::Tensor x = Filled(d, {nodes, dim});
  fs::Tensor out = Must(fs::Tensor::EmptyOn(d, {nodes, dim}, fs::DType::kF32), "alloc");
  const double t_spmm =
      Best(d, reps, [&] { Must(fs::kernels::Spmm(ctx, csr, fs::kernels::Reduce::kSum, x, &out, nullptr), "spmm"); });
  fs::kernels::Csr csr_t;
  fs::Tensor perm;
  Must(fs::kernels::TransposeCsr(ctx, csr, &csr_t, &perm), "transpose");
  fs::Tensor gx = Must(fs::Tensor::EmptyOn(d, {nodes, dim}, fs::DType::kF32), "alloc");
  const double t_spmm_bwd = Best(d, reps, [&] {
    Must(fs::kernels::SpmmBackward(ctx, csr, csr_t, perm, fs::kernels::Reduce::kSum, out, fs::Tensor(), &gx),
         "spmm backward");
  });
  const double spmm_bytes = f4 * static_cast<double>(edges * dim) + f4 * static_cast<double>(nodes * dim) +
                            8.0 * static_cast<double>(edges + nodes);
  x = out = gx = fs::Tensor();
  csr = csr_t = fs::kernels::Csr();

  // Embedding bag forward: 26 tables x (table / 26) rows, one id per bag.
  const int64_t tables = 26, per_table = std::max<int64_t>(1, table / tables);
  fs::kernels::EmbeddingRowLayout layout;
  layout.dim = dim;
  fs::Tensor weights = Filled(d, {tables * per_table, layout.row_width()});
  fs::Tensor toff = fs::Tensor::Empty({tables + 1}, fs::DType::kI64);
  for (int64_t t = 0; t <= tables; ++t) toff.data<int64_t>()[t] = t * per_table;
  fs::Tensor offs = fs::Tensor::Empty({tables * batch + 1}, fs::DType::kI64);
  for (int64_t q = 0; q <= tables * batch; ++q) offs.data<int64_t>()[q] = q;
  toff = Must(toff.To(d), "table offsets");
  offs = Must(offs.To(d), "offsets");
  fs::Tensor bids = Must(Ids(tables * batch, per_table, 3).To(d), "ids");
  fs::Tensor pooled = Must(fs::Tensor::EmptyOn(d, {batch, tables * dim}, fs::DType::kF32), "alloc");
  const double t_bag = Best(d, reps, [&] {
    Must(fs::kernels::EmbeddingBagForward(ctx, layout, weights, toff, bids, offs, fs::Tensor(),
                                          fs::kernels::Pooling::kSum, &pooled),
         "embedding bag");
  });
  const double bag_bytes =
      2.0 * f4 * static_cast<double>(tables * batch * dim) + 16.0 * static_cast<double>(tables * batch);
  weights = pooled = fs::Tensor();

  // Host -> device from pinned memory: plain, and on the copy slot.
  const int64_t h2d_n = std::min<int64_t>(copy_n, int64_t{256} << 20);
  fs::Tensor pinned = Must(fs::Tensor::EmptyPinned({h2d_n}, fs::DType::kF32), "pinned");
  fs::Tensor on_gpu = Must(fs::Tensor::EmptyOn(d, {h2d_n}, fs::DType::kF32), "alloc");
  const double t_h2d = Best(d, reps, [&] { Must(on_gpu.CopyFrom(pinned), "h2d"); });
  fs::StreamEvent ev = Must(fs::StreamEvent::Create(d), "event");
  const double t_h2d_slot = Best(d, reps, [&] {
    Must(fs::CopyAsync(on_gpu.raw_data(), pinned.raw_data(), on_gpu.nbytes(), d, fs::kCopySlot), "h2d async");
    Must(ev.Record(fs::kCopySlot), "record");
    Must(ev.WaitOn(fs::kComputeSlot), "wait");
  });
  const double h2d_bytes = f4 * static_cast<double>(h2d_n);

  auto gbps = [](double bytes, double s) { return bytes / s / 1e9; };
  std::printf(
      "{\"device\": \"%s\", \"copy_gbps\": %.1f, "
      "\"gather\": {\"seconds\": %.6f, \"gbps\": %.1f, \"fraction\": %.3f}, "
      "\"spmm_sum\": {\"seconds\": %.6f, \"gbps\": %.1f, \"fraction\": %.3f}, "
      "\"spmm_sum_backward\": {\"seconds\": %.6f, \"gbps\": %.1f, \"fraction\": %.3f}, "
      "\"embedding_bag\": {\"seconds\": %.6f, \"gbps\": %.1f, \"fraction\": %.3f}, "
      "\"h2d_pinned_gbps\": %.1f, \"h2d_copy_slot_gbps\": %.1f, \"h2d_copy_slot_fraction\": %.3f, "
      "\"shape\": {\"rows\": %lld, \"table\": %lld, \"nodes\": %lld, \"degree\": %lld, \"dim\": %lld, "
      "\"batch\": %lld}}\n",
      d.ToString().c_str(), copy_gbps, t_gather, gbps(gather_bytes, t_gather), gbps(gather_bytes, t_gather) / copy_gbps,
      t_spmm, gbps(spmm_bytes, t_spmm), gbps(spmm_bytes, t_spmm) / copy_gbps, t_spmm_bwd, gbps(spmm_bytes, t_spmm_bwd),
      gbps(spmm_bytes, t_spmm_bwd) / copy_gbps, t_bag, gbps(bag_bytes, t_bag), gbps(bag_bytes, t_bag) / copy_gbps,
      gbps(h2d_bytes, t_h2d), gbps(h2d_bytes, t_h2d_slot), t_h2d / t_h2d_slot, static_cast<long long>(rows),
      static_cast<long long>(table), static_cast<long long>(nodes), static_cast<long long>(degree),
      static_cast<long long>(dim), static_cast<long long>(batch));
  return 0;
}
