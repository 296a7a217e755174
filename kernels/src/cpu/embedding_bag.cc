// Embedding bags on the CPU. Forward: bags in fixed chunks over the pool,
// each bag summed in id order straight into its slice of out, the next rows
// prefetched (a random row gather is bound by memory latency). Backward +
// update: each table's occurrences (contiguous, since bags are table-major)
// sorted by (row, position) as packed 64-bit keys, one table per task; then
// the distinct rows in fixed chunks, each row's gradient summed in
// ascending position and applied once. No step depends on the thread
// count, so results are bitwise identical for any pool.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

namespace {

constexpr int kPrefetchDistance = 8;  // ids ahead whose rows are prefetched
constexpr int64_t kGroupGrain = 32;   // distinct rows per backward chunk

// ---- row conversion (f16 rows widen exactly; stores round to nearest even) ----

inline void AddRow(float* acc, const float* src, int64_t n) {
  for (int64_t j = 0; j < n; ++j) acc[j] += src[j];
}
inline void AddScaledRow(float* acc, const float* src, float w, int64_t n) {
  for (int64_t j = 0; j < n; ++j) acc[j] += w * src[j];
}
inline void LoadRow(const float* src, float* dst, int64_t n) { std::memcpy(dst, src, n * sizeof(float)); }
inline void StoreRow(const float* src, float* dst, int64_t n) { std::memcpy(dst, src, n * sizeof(float)); }

inline void LoadRow(const Half* src, float* dst, int64_t n) {
  int64_t j = 0;
#if defined(__F16C__)
  for (; j + 8 <= n; j += 8) {
    _mm256_storeu_ps(dst + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j))));
  }
#endif
  for (; j < n; ++j) dst[j] = HalfToFloat(src[j].bits);
}
inline void StoreRow(const float* src, Half* dst, int64_t n) {
  int64_t j = 0;
#if defined(__F16C__)
  for (; j + 8 <= n; j += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + j), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
#endif
  for (; j < n; ++j) dst[j].bits = FloatToHalf(src[j]);
}
inline void AddRow(float* acc, const Half* src, int64_t n) {
  int64_t j = 0;
#if defined(__F16C__)
  for (; j + 8 <= n; j += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j)));
    _mm256_storeu_ps(acc + j, _mm256_add_ps(_mm256_loadu_ps(acc + j), x));
  }
#endif
  for (; j < n; ++j) acc[j] += HalfToFloat(src[j].bits);
}
inline void AddScaledRow(float* acc, const Half* src, float w, int64_t n) {
  int64_t j = 0;
#if defined(__F16C__)
  const __m256 vw = _mm256_set1_ps(w);
  for (; j + 8 <= n; j += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j)));
    _mm256_storeu_ps(acc + j, _mm256_add_ps(_mm256_loadu_ps(acc + j), _mm256_mul_ps(vw, x)));
  }
#endif
  for (; j < n; ++j) acc[j] += w * HalfToFloat(src[j].bits);
}

inline void Prefetch(const void* p) { __builtin_prefetch(p, 0, 1); }

// ---- value checks ----

Status CheckBagOffsets(const char* op, const int64_t* offsets, int64_t num_bags, int64_t num_ids) {
  if (offsets[0] != 0) {
    return InvalidArgument(std::string(op) + ": offsets[0] must be 0, got " + std::to_string(offsets[0]));
  }
  for (int64_t q = 0; q < num_bags; ++q) {
    if (offsets[q + 1] < offsets[q]) {
      return InvalidArgument(std::string(op) + ": offsets must not decrease: offsets[" + std::to_string(q + 1) +
                             "] = " + std::to_string(offsets[q + 1]) + " < offsets[" + std::to_string(q) +
                             "] = " + std::to_string(offsets[q]));
    }
  }
  if (offsets[num_bags] != num_ids) {
    return InvalidArgument(std::string(op) + ": offsets[" + std::to_string(num_bags) + "] must equal the " +
                           std::to_string(num_ids) + " ids, got " + std::to_string(offsets[num_bags]));
  }
  return Status::OK();
}

Status CheckTableOffsets(const char* op, const int64_t* to, int64_t tables, int64_t rows) {
  if (to[0] < 0) return InvalidArgument(std::string(op) + ": table_offsets[0] is negative");
  for (int64_t t = 0; t < tables; ++t) {
    if (to[t + 1] < to[t]) {
      return InvalidArgument(std::string(op) + ": table_offsets must not decrease (table " + std::to_string(t) +
                             " ends before it starts)");
    }
  }
  if (to[tables] > rows) {
    return InvalidArgument(std::string(op) + ": table_offsets[" + std::to_string(tables) + "] = " +
                           std::to_string(to[tables]) + " exceeds the " + std::to_string(rows) + " rows of weights");
  }
  return Status::OK();
}

// The shape of a call, read once.
struct Bags {
  int64_t batch = 0, tables = 0, dim = 0, row_width = 0, rows = 0, num_ids = 0;
  const int64_t* offsets = nullptr;
  const int64_t* table_offsets = nullptr;  // null: ids are rows of weights
  const float* psw = nullptr;
  Pooling pooling = Pooling::kSum;

  int64_t num_bags() const { return batch * tables; }
  int64_t base(int64_t t) const { return table_offsets != nullptr ? table_offsets[t] : 0; }
  int64_t limit(int64_t t) const { return table_offsets != nullptr ? table_offsets[t + 1] - table_offsets[t] : rows; }
};

StatusOr<Bags> ReadBags(const char* op, const EmbeddingRowLayout& layout, const Tensor& weights,
                        const Tensor& table_offsets, const Tensor& ids, const Tensor& offsets,
                        const Tensor& psw, Pooling pooling, const Tensor& pooled) {
  Bags g;
  g.batch = pooled.size(0);
  g.dim = layout.dim;
  g.tables = pooled.size(1) / layout.dim;
  g.row_width = layout.row_width();
  g.rows = weights.size(0);
  g.num_ids = ids.size(0);
  g.offsets = offsets.data<int64_t>();
  g.table_offsets = table_offsets.defined() ? table_offsets.data<int64_t>() : nullptr;
  g.psw = psw.defined() ? psw.data<float>() : nullptr;
  g.pooling = pooling;
  FS_RETURN_IF_ERROR(CheckBagOffsets(op, g.offsets, g.num_bags(), g.num_ids));
  if (g.table_offsets != nullptr) FS_RETURN_IF_ERROR(CheckTableOffsets(op, g.table_offsets, g.tables, g.rows));
  return g;
}

Status BadId(const char* op, const Bags& g, int64_t k, int64_t id) {
  const int64_t q = std::upper_bound(g.offsets, g.offsets + g.num_bags() + 1, k) - g.offsets - 1;
  const int64_t t = q / std::max<int64_t>(g.batch, 1);
  return OutOfRange(std::string(op) + ": ids[" + std::to_string(k) + "] = " + std::to_string(id) + " (sample " +
                    std::to_string(q % std::max<int64_t>(g.batch, 1)) + " of table " + std::to_string(t) +
                    ") is out of the table's range [0, " + std::to_string(g.limit(t)) + ")");
}

// ---- forward ----

template <typename W, typename I>
Status ForwardTyped(const ExecContext& ctx, const Bags& g, const W* weights, const I* ids, float* out) {
  const int64_t nb = g.num_bags();
  const int64_t avg = nb > 0 ? g.num_ids / nb : 0;
  const int64_t grain = std::max<int64_t>(1, kElementGrain / (g.dim * (1 + avg)));
  std::vector<int64_t> bad(static_cast<size_t>(ThreadPool::NumChunks(nb, grain)), -1);
  ctx.pool->ParallelForChunks(nb, grain, [&](int64_t chunk, int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t t = q / g.batch, b = q % g.batch;
      const int64_t base = g.base(t), limit = g.limit(t);
      float* o = out + (b * g.tables + t) * g.dim;
      std::fill(o, o + g.dim, 0.0f);
      const int64_t k0 = g.offsets[q], k1 = g.offsets[q + 1];
      for (int64_t k = k0; k < k1; ++k) {
        if (k + kPrefetchDistance < k1) {
          Prefetch(weights + (base + static_cast<int64_t>(ids[k + kPrefetchDistance])) * g.row_width);
        }
        const int64_t id = static_cast<int64_t>(ids[k]);
        if (id < 0 || id >= limit) {
          bad[chunk] = k;
          return;
        }
        const W* row = weights + (base + id) * g.row_width;
        if (g.psw != nullptr) {
          AddScaledRow(o, row, g.psw[k], g.dim);
        } else {
          AddRow(o, row, g.dim);
        }
      }
      if (g.pooling == Pooling::kMean && k1 > k0) {
        const float len = static_cast<float>(k1 - k0);
        for (int64_t j = 0; j < g.dim; ++j) o[j] = o[j] / len;
      }
    }
  });
  for (int64_t k : bad) {
    if (k >= 0) return BadId("EmbeddingBagForward", g, k, static_cast<int64_t>(ids[k]));
  }
  return Status::OK();
}

// ---- backward + update ----

// Applies one row's update; g (dim floats) is the row's summed gradient and
// may be overwritten; w is scratch of dim floats.
template <typename W>
void UpdateRow(const EmbeddingRowLayout& layout, const SparseOptimizerConfig& c, float bc1, float bc2, W* row,
               float* g, float* w) {
  const int64_t dim = layout.dim;
  float* state = reinterpret_cast<float*>(row + layout.state_offset());
  LoadRow(row, w, dim);
  if (c.weight_decay > 0) {
    for (int64_t j = 0; j < dim; ++j) g[j] += c.weight_decay * w[j];
  }
  switch (c.kind) {
    case SparseOptimizer::kSgd:
      for (int64_t j = 0; j < dim; ++j) w[j] = w[j] - c.lr * g[j];
      break;
    case SparseOptimizer::kRowwiseAdagrad: {
      float ss = 0.0f;
      for (int64_t j = 0; j < dim; ++j) ss += g[j] * g[j];
      state[0] += ss / static_cast<float>(dim);
      const float denom = std::sqrt(state[0]) + c.eps;
      for (int64_t j = 0; j < dim; ++j) w[j] = w[j] - c.lr * g[j] / denom;
      break;
    }
    case SparseOptimizer::kAdam: {
      float* m = state;
      float* v = state + dim;
      const float a1 = 1.0f - c.beta1, a2 = 1.0f - c.beta2;
      for (int64_t j = 0; j < dim; ++j) {
        m[j] = c.beta1 * m[j] + a1 * g[j];
        v[j] = c.beta2 * v[j] + a2 * (g[j] * g[j]);
        w[j] = w[j] - c.lr * (m[j] / bc1) / (std::sqrt(v[j] / bc2) + c.eps);
      }
      break;
    }
  }
  StoreRow(w, row, dim);
}

template <typename W, typename I>
Status BackwardTyped(const ExecContext& ctx, const EmbeddingRowLayout& layout, const SparseOptimizerConfig& c,
                     const Bags& g, const I* ids, const float* grad_out, W* weights) {
  const int64_t n = g.num_ids;
  const int64_t nb = g.num_bags();
  // Bag of every occurrence.
  std::vector<int32_t> bag_of(static_cast<size_t>(n));
  if (nb >= (int64_t{1} << 31)) return InvalidArgument("EmbeddingBagBackwardUpdate: more than 2^31-1 bags");
  ctx.pool->ParallelFor(nb, 4096, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      for (int64_t k = g.offsets[q]; k < g.offsets[q + 1]; ++k) bag_of[k] = static_cast<int32_t>(q);
    }
  });
  // Segments sorted independently: one per table (their rows are disjoint),
  // or all ids at once when they index weights directly.
  const int64_t num_seg = g.table_offsets != nullptr ? g.tables : 1;
  std::vector<int64_t> seg_begin(num_seg + 1);
  for (int64_t s = 0; s < num_seg; ++s) seg_begin[s] = g.table_offsets != nullptr ? g.offsets[s * g.batch] : 0;
  seg_begin[num_seg] = n;
  // sorted[i]: occurrence position; row_of_sorted[i]: its row in weights.
  std::vector<int64_t> sorted(static_cast<size_t>(n)), row_of(static_cast<size_t>(n));
  std::vector<int64_t> bad(static_cast<size_t>(num_seg), -1);
  ctx.pool->ParallelForChunks(num_seg, 1, [&](int64_t s, int64_t, int64_t) {
    const int64_t b0 = seg_begin[s], b1 = seg_begin[s + 1], len = b1 - b0;
    const int64_t base = g.table_offsets != nullptr ? g.base(s) : 0;
    const int64_t limit = g.table_offsets != nullptr ? g.limit(s) : g.rows;
    for (int64_t k = b0; k < b1; ++k) {
      const int64_t id = static_cast<int64_t>(ids[k]);
      if (id < 0 || id >= limit) {
        bad[s] = k;
        return;
      }
    }
    if (limit <= (int64_t{1} << 32) && len <= (int64_t{1} << 32)) {
      // Packed (id, position) keys: one 8-byte sort.
      std::vector<uint64_t> keys(static_cast<size_t>(len));
      for (int64_t k = b0; k < b1; ++k) {
        keys[k - b0] = (static_cast<uint64_t>(ids[k]) << 32) | static_cast<uint64_t>(k - b0);
      }
      std::sort(keys.begin(), keys.end());
      for (int64_t i = 0; i < len; ++i) {
        sorted[b0 + i] = b0 + static_cast<int64_t>(keys[i] & 0xffffffffu);
        row_of[b0 + i] = base + static_cast<int64_t>(keys[i] >> 32);
      }
    } else {
      std::vector<std::pair<int64_t, int64_t>> keys(static_cast<size_t>(len));
      for (int64_t k = b0; k < b1; ++k) keys[k - b0] = {static_cast<int64_t>(ids[k]), k};
      std::sort(keys.begin(), keys.end());
      for (int64_t i = 0; i < len; ++i) {
        sorted[b0 + i] = keys[i].second;
        row_of[b0 + i] = base + keys[i].first;
      }
    }
  });
  for (int64_t k : bad) {
    if (k >= 0) return BadId("EmbeddingBagBackwardUpdate", g, k, static_cast<int64_t>(ids[k]));
  }
  std::vector<int64_t> groups;
  groups.reserve(static_cast<size_t>(n) + 1);
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || row_of[i] != row_of[i - 1]) groups.push_back(i);
  }
  groups.push_back(n);
  const int64_t num_groups = static_cast<int64_t>(groups.size()) - 1;
  const float bc1 = c.kind == SparseOptimizer::kAdam ? static_cast<float>(1.0 - std::pow(double(c.beta1), double(c.step))) : 1.0f;
  const float bc2 = c.kind == SparseOptimizer::kAdam ? static_cast<float>(1.0 - std::pow(double(c.beta2), double(c.step))) : 1.0f;
  const int64_t dim = g.dim, out_width = g.tables * g.dim;
  ctx.pool->ParallelFor(num_groups, kGroupGrain, [&](int64_t r0, int64_t r1) {
    std::vector<float> grad(static_cast<size_t>(dim)), scratch(static_cast<size_t>(dim));
    for (int64_t r = r0; r < r1; ++r) {
      if (r + 2 < r1) Prefetch(weights + row_of[groups[r + 2]] * g.row_width);
      std::fill(grad.begin(), grad.end(), 0.0f);
      for (int64_t i = groups[r]; i < groups[r + 1]; ++i) {
        const int64_t k = sorted[i];
        const int64_t q = bag_of[k];
        const int64_t t = q / g.batch, b = q % g.batch;
        const float* go = grad_out + b * out_width + t * dim;
        if (g.psw != nullptr) {
          AddScaledRow(grad.data(), go, g.psw[k], dim);
        } else if (g.pooling == Pooling::kMean) {
          AddScaledRow(grad.data(), go, 1.0f / static_cast<float>(g.offsets[q + 1] - g.offsets[q]), dim);
        } else {
          AddRow(grad.data(), go, dim);
        }
      }
      UpdateRow(layout, c, bc1, bc2, weights + row_of[groups[r]] * g.row_width, grad.data(), scratch.data());
    }
  });
  return Status::OK();
}

}  // namespace

Status EmbeddingBagForward(const ExecContext& ctx, const EmbeddingRowLayout& layout, const Tensor& weights,
                           const Tensor& table_offsets, const Tensor& ids, const Tensor& offsets,
                           const Tensor& per_sample_weights, Pooling pooling, Tensor* out) {
  FS_ASSIGN_OR_RETURN(Bags g, ReadBags("EmbeddingBagForward", layout, weights, table_offsets, ids, offsets,
                                       per_sample_weights, pooling, *out));
  if (g.batch == 0) return Status::OK();
  return WithIndexType(ids.dtype(), [&](auto i) {
    using I = decltype(i);
    if (layout.dtype == DType::kF16) {
      return ForwardTyped(ctx, g, weights.data<Half>(), ids.data<I>(), out->data<float>());
    }
    return ForwardTyped(ctx, g, weights.data<float>(), ids.data<I>(), out->data<float>());
  });
}

Status EmbeddingBagBackwardUpdate(const ExecContext& ctx, const EmbeddingRowLayout& layout,
                                  const SparseOptimizerConfig& config, const Tensor& table_offsets,
                                  const Tensor& ids, const Tensor& offsets, const Tensor& per_sample_weights,
                                  Pooling pooling, const Tensor& grad_out, Tensor* weights) {
  FS_ASSIGN_OR_RETURN(Bags g, ReadBags("EmbeddingBagBackwardUpdate", layout, *weights, table_offsets, ids, offsets,
                                       per_sample_weights, pooling, grad_out));
  if (g.batch == 0) return Status::OK();
  return WithIndexType(ids.dtype(), [&](auto i) {
    using I = decltype(i);
    if (layout.dtype == DType::kF16) {
      return BackwardTyped(ctx, layout, config, g, ids.data<I>(), grad_out.data<float>(), weights->data<Half>());
    }
    return BackwardTyped(ctx, layout, config, g, ids.data<I>(), grad_out.data<float>(), weights->data<float>());
  });
}

}  // namespace foresight::kernels::cpu
