// Embedding-bag forward and fused backward + update (SGD) on the CPU,
// against this machine's floors measured in the same run on the same table
// (so a loaded machine slows both alike). Prints one JSON line.
//
// Default shape (issue 12): 26 tables x 1M rows x 64 f32, batch 2048, one id
// per bag drawn from Zipf(1.05) over each table's rows (hot rows scattered
// over the table), sum pooling, SGD. Per batch, side by side:
//   forward            EmbeddingBagForward
//   backward_update    EmbeddingBagBackwardUpdate (sort, per-row sums, SGD)
//   floor_same_ids     reading the batch's rows in id order into a resident
//                      accumulator: the forward's unavoidable memory traffic
//   floor_rmw          row -= lr * g over the batch's distinct rows, g
//                      contiguous: the update's unavoidable traffic
//   floor_uniform      reading as many rows at uniform random ids: this
//                      machine's random row-gather rate
// Times are the best (minimum) over the timed batches, floors likewise;
// distinct_rows_per_batch is the median. Beside each wall time, the
// process's CPU time in the phase (all threads, *_cpu_ms, best batch): on a
// shared machine a phase longer than a scheduler slice is preempted in
// nearly every batch, so its best wall time still carries the load while
// its CPU time does not (the pool's idle threads spin at most 100 us).
//
// Usage: embedding_bench [--tables 26] [--rows 1000000] [--dim 64]
//   [--batch 2048] [--bag 1] [--zipf 1.05] [--threads 2] [--batches 20]
//   [--ids-out FILE.npy]
// --ids-out writes every batch's ids (warm-up ones first) as an i64 .npy of
// [3 + batches, tables * batch * bag], table-major, `bag` ids a bag, so
// another implementation (bench/embedding_fbgemm.py) replays the same ids.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/stopwatch.h"
#include "foresight/kernels/ops.h"
#include "foresight/storage/npy.h"
#include "zipf_ids.h"

namespace fs = foresight;
using fs::bench::Zipf;

namespace {

volatile float g_sink = 0;

// The least disturbed batch: on a shared machine the minimum, like the
// floors, is what the code costs.
double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// CPU seconds of the whole process (every thread).
double ProcessCpu() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double Best(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }

// Reads rows[ids[i]] (global rows) into per-chunk resident accumulators.
void ReadRows(fs::ThreadPool* pool, const float* w, int64_t width, int64_t dim, const std::vector<int64_t>& rows) {
  const int64_t n = static_cast<int64_t>(rows.size());
  pool->ParallelForChunks(n, 1024, [&](int64_t, int64_t s, int64_t e) {
    std::vector<float> acc(static_cast<size_t>(dim), 0.0f);
    float* __restrict a = acc.data();
    for (int64_t i = s; i < e; ++i) {
      if (i + 8 < e) {
        for (int64_t j = 0; j < dim; j += 16) __builtin_prefetch(w + rows[i + 8] * width + j);
      }
      const float* __restrict r = w + rows[i] * width;
      for (int64_t j = 0; j < dim; ++j) a[j] += r[j];
    }
    g_sink = a[0];
  });
}

}  // namespace

int main(int argc, char** argv) {
  int64_t tables = 26, rows = 1000000, dim = 64, batch = 2048, bag = 1;
  double zipf = 1.05;
  int threads = 2, batches = 20;
  std::string ids_out;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--tables") tables = std::atoll(argv[i + 1]);
    else if (k == "--rows") rows = std::atoll(argv[i + 1]);
    else if (k == "--dim") dim = std::atoll(argv[i + 1]);
    else if (k == "--batch") batch = std::atoll(argv[i + 1]);
    else if (k == "--bag") bag = std::atoll(argv[i + 1]);
    else if (k == "--zipf") zipf = std::atof(argv[i + 1]);
    else if (k == "--threads") threads = std::atoi(argv[i + 1]);
    else if (k == "--batches") batches = std::atoi(argv[i + 1]);
    else if (k == "--ids-out") ids_out = argv[i + 1];
    else {
      std::fprintf(stderr, "embedding_bench: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  fs::ThreadPool pool(threads);
  fs::ExecContext ctx = fs::CpuContext(0, &pool);
  const fs::kernels::EmbeddingRowLayout layout{dim, fs::DType::kF32, fs::kernels::SparseOptimizer::kSgd};
  const int64_t width = layout.row_width(), total = tables * rows;
  fs::Tensor weights = fs::Tensor::Empty({total, width}, fs::DType::kF32);
  float* w = weights.data<float>();
  pool.ParallelFor(total, 1 << 14, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      for (int64_t j = 0; j < width; ++j) w[r * width + j] = static_cast<float>((r * 31 + j) % 97) * 1e-3f;
    }
  });
  fs::Tensor table_offsets = fs::Tensor::Empty({tables + 1}, fs::DType::kI64);
  for (int64_t t = 0; t <= tables; ++t) table_offsets.data<int64_t>()[t] = t * rows;

  const Zipf z(rows, zipf);
  std::mt19937_64 rng(42);
  const int64_t n = tables * batch * bag;
  fs::Tensor ids = fs::Tensor::Empty({n}, fs::DType::kI64);
  fs::Tensor offsets = fs::Tensor::Empty({tables * batch + 1}, fs::DType::kI64);
  for (int64_t q = 0; q <= tables * batch; ++q) offsets.data<int64_t>()[q] = q * bag;
  fs::Tensor out = fs::Tensor::Empty({batch, tables * dim}, fs::DType::kF32);
  fs::Tensor grad = fs::Tensor::Empty({batch, tables * dim}, fs::DType::kF32);
  for (int64_t i = 0; i < grad.numel(); ++i) grad.data<float>()[i] = 1e-4f * static_cast<float>(i % 13);
  fs::kernels::SparseOptimizerConfig sgd;
  sgd.lr = 0.01f;

  std::vector<double> fwd, bwd, floor_same, floor_rmw, floor_uniform, distinct;
  std::vector<double> fwd_cpu, bwd_cpu, uniform_cpu;
  const int warmup = 3;
  fs::Tensor all_ids;
  if (!ids_out.empty()) all_ids = fs::Tensor::Empty({warmup + batches, n}, fs::DType::kI64);
  for (int it = 0; it < warmup + batches; ++it) {
    // A fresh batch: Zipf ranks scattered over the table's rows.
    std::vector<int64_t> global(static_cast<size_t>(n));
    fs::bench::DrawTableMajorIds(z, rng, tables, rows, batch * bag, ids.data<int64_t>());
    for (int64_t k = 0; k < n; ++k) global[k] = k / (batch * bag) * rows + ids.data<int64_t>()[k];
    if (all_ids.defined()) std::memcpy(all_ids.data<int64_t>() + it * n, ids.data<int64_t>(), n * sizeof(int64_t));
    std::vector<int64_t> uniq = global;
    std::sort(uniq.begin(), uniq.end());
    uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
    std::vector<int64_t> uniform(static_cast<size_t>(n));
    for (int64_t& u : uniform) u = static_cast<int64_t>(rng() % static_cast<uint64_t>(total));
    std::vector<float> g(static_cast<size_t>(uniq.size() * dim), 1e-4f);

    fs::Stopwatch sw;
    const double c0 = ProcessCpu();
    ReadRows(&pool, w, width, dim, uniform);
    const double t_uniform = sw.Lap();
    const double c1 = ProcessCpu();
    ReadRows(&pool, w, width, dim, global);
    const double t_same = sw.Lap();
    const double c2 = ProcessCpu();
    fs::Status s = fs::kernels::EmbeddingBagForward(ctx, layout, weights, table_offsets, ids, offsets, fs::Tensor(),
                                                    fs::kernels::Pooling::kSum, &out);
    const double t_fwd = sw.Lap();
    const double c3 = ProcessCpu();
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    s = fs::kernels::EmbeddingBagBackwardUpdate(ctx, layout, sgd, table_offsets, ids, offsets, fs::Tensor(),
                                                fs::kernels::Pooling::kSum, grad, &weights);
    const double t_bwd = sw.Lap();
    const double c4 = ProcessCpu();
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    const int64_t nu = static_cast<int64_t>(uniq.size());
    pool.ParallelFor(nu, 256, [&](int64_t a, int64_t b) {
      for (int64_t i = a; i < b; ++i) {
        if (i + 8 < b) {
          for (int64_t j = 0; j < dim; j += 16) __builtin_prefetch(w + uniq[i + 8] * width + j, 1);
        }
        float* __restrict r = w + uniq[i] * width;
        const float* __restrict gi = g.data() + i * dim;
        for (int64_t j = 0; j < dim; ++j) r[j] = r[j] - 0.01f * gi[j];
      }
    });
    const double t_rmw = sw.Lap();
    if (it < warmup) continue;
    fwd.push_back(t_fwd);
    fwd_cpu.push_back(c3 - c2);
    bwd_cpu.push_back(c4 - c3);
    uniform_cpu.push_back(c1 - c0);
    bwd.push_back(t_bwd);
    floor_same.push_back(t_same);
    floor_rmw.push_back(t_rmw);
    floor_uniform.push_back(t_uniform);
    distinct.push_back(static_cast<double>(nu));
  }
  if (all_ids.defined()) {
    const fs::Status s = fs::storage::SaveNpy(ids_out, all_ids);
    if (!s.ok()) {
      std::fprintf(stderr, "embedding_bench: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  const double f = Best(fwd), b = Best(bwd), fs_ = Best(floor_same), fr = Best(floor_rmw),
               fu = Best(floor_uniform);
  const double uniform_rows_per_s = static_cast<double>(n) / fu;
  const double fwd_bwd_ids_per_s = static_cast<double>(n) / (f + b);
  std::printf(
      "{\"bench\":\"embedding_bag\",\"tables\":%lld,\"rows\":%lld,\"dim\":%lld,\"batch\":%lld,\"bag\":%lld,"
      "\"zipf\":%.2f,\"threads\":%d,\"batches\":%d,\"ids_per_batch\":%lld,\"distinct_rows_per_batch\":%.0f,"
      "\"forward_ms\":%.3f,\"backward_update_ms\":%.3f,\"floor_same_ids_ms\":%.3f,\"floor_rmw_distinct_ms\":%.3f,"
      "\"floor_uniform_gather_ms\":%.3f,\"uniform_gather_rows_per_s\":%.4g,\"fwd_bwd_ids_per_s\":%.4g,"
      "\"forward_vs_same_ids_floor\":%.3f,\"backward_update_vs_rmw_floor\":%.3f,"
      "\"fwd_bwd_rate_vs_uniform_gather_rate\":%.3f,\"forward_cpu_ms\":%.3f,\"backward_update_cpu_ms\":%.3f,"
      "\"floor_uniform_gather_cpu_ms\":%.3f,\"fwd_bwd_vs_uniform_gather_cpu\":%.3f}\n",
      static_cast<long long>(tables), static_cast<long long>(rows), static_cast<long long>(dim),
      static_cast<long long>(batch), static_cast<long long>(bag), zipf, threads, batches, static_cast<long long>(n),
      MedianOf(distinct), f * 1e3, b * 1e3, fs_ * 1e3, fr * 1e3, fu * 1e3, uniform_rows_per_s, fwd_bwd_ids_per_s,
      fs_ / f, fr / b, fwd_bwd_ids_per_s / uniform_rows_per_s, Best(fwd_cpu) * 1e3, Best(bwd_cpu) * 1e3,
      Best(uniform_cpu) * 1e3, Best(uniform_cpu) / (Best(fwd_cpu) + Best(bwd_cpu)));
  return 0;
}
