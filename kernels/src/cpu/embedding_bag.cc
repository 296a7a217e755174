// Embedding bags on the CPU. Forward: bags in fixed chunks over the pool,
// each bag summed in id order straight into its slice of out, the next rows
// prefetched (a random row gather is bound by memory latency). Backward +
// update: each table's occurrences (contiguous, since bags are table-major)
// grouped by row with a hash and a counting pass, one table per task; then
// the distinct rows in fixed chunks, each row's gradient summed in
// ascending position (from its first term) and applied once. No step depends on the thread
// count, so results are bitwise identical for any pool.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "../check.h"
#include "../embedding_bag_args.h"
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
// Every 64-byte line of a row of `bytes` bytes.
inline void PrefetchRow(const void* p, int64_t bytes) {
  for (int64_t b = 0; b < bytes; b += 64) Prefetch(static_cast<const char*>(p) + b);
}

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

using Bags = internal::EmbeddingBagArgs;

StatusOr<Bags> ReadBags(const char* op, const EmbeddingRowLayout& layout, const Tensor& weights,
                        const Tensor& table_offsets, const Tensor& ids, const Tensor& offsets,
                        const Tensor& psw, Pooling pooling, const Tensor& pooled) {
  const Bags g = internal::UnpackEmbeddingBagArgs(layout, weights, table_offsets, ids, offsets, psw, pooling, pooled);
  FS_RETURN_IF_ERROR(CheckBagOffsets(op, g.offsets, g.num_bags(), g.num_ids));
  if (g.table_offsets != nullptr) {
    FS_RETURN_IF_ERROR(internal::CheckTableOffsetValues(op, g.table_offsets, g.tables, g.rows));
  }
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
  // Samples in chunks, every table of a sample in turn: out is written in
  // order, a row of T*dim floats at a time.
  const int64_t avg = g.num_bags() > 0 ? g.num_ids / g.num_bags() : 0;
  const int64_t grain = std::max<int64_t>(1, kElementGrain / (g.tables * g.dim * (1 + avg)));
  const int64_t row_bytes = g.dim * static_cast<int64_t>(sizeof(W));
  std::vector<int64_t> bad(static_cast<size_t>(ThreadPool::NumChunks(g.batch, grain)), -1);
  ctx.pool->ParallelForChunks(g.batch, grain, [&](int64_t chunk, int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      for (int64_t t = 0; t < g.tables; ++t) {
        const int64_t q = t * g.batch + b;
        if (t + kPrefetchDistance / 2 < g.tables) {
          // The rows of this sample's bag a few tables on (its first
          // kPrefetchDistance ids; a longer bag prefetches the rest itself,
          // below): without them a short multi-hot bag's later ids all miss.
          const int64_t tp = t + kPrefetchDistance / 2;
          const int64_t kp = g.offsets[tp * g.batch + b];
          const int64_t kp_end = std::min(g.offsets[tp * g.batch + b + 1], kp + kPrefetchDistance);
          for (int64_t k = kp; k < kp_end; ++k) {
            const int64_t id = static_cast<int64_t>(ids[k]);
            // An id out of range is reported below; only in-range rows are touched.
            if (id >= 0 && id < g.limit(tp)) PrefetchRow(weights + (g.base(tp) + id) * g.row_width, row_bytes);
          }
        }
        const int64_t base = g.base(t), limit = g.limit(t);
        float* o = out + (b * g.tables + t) * g.dim;
        std::fill(o, o + g.dim, 0.0f);
        const int64_t k0 = g.offsets[q], k1 = g.offsets[q + 1];
        for (int64_t k = k0; k < k1; ++k) {
          if (k + kPrefetchDistance < k1) {
            PrefetchRow(weights + (base + static_cast<int64_t>(ids[k + kPrefetchDistance])) * g.row_width, row_bytes);
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
        if (g.mean && k1 > k0) {
          const float len = static_cast<float>(k1 - k0);
          for (int64_t j = 0; j < g.dim; ++j) o[j] = o[j] / len;
        }
      }
    }
  });
  int64_t first = -1;
  for (int64_t k : bad) {
    if (k >= 0 && (first < 0 || k < first)) first = k;
  }
  if (first >= 0) return BadId("EmbeddingBagForward", g, first, static_cast<int64_t>(ids[first]));
  return Status::OK();
}

// ---- backward + update ----

// Applies one row's update; g (dim floats) is the row's summed gradient and
// may be overwritten; scratch holds dim floats (f16 rows are widened there;
// f32 rows are updated in place).
template <typename W>
void UpdateRow(const EmbeddingRowLayout& layout, const SparseOptimizerConfig& c, float bc1, float bc2, W* row,
               float* g, float* scratch) {
  constexpr bool kInPlace = std::is_same<W, float>::value;
  const int64_t dim = layout.dim;
  float* state = reinterpret_cast<float*>(row + layout.state_offset());
  float* w = kInPlace ? reinterpret_cast<float*>(row) : scratch;
  if (!kInPlace) LoadRow(row, w, dim);
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
  if (!kInPlace) StoreRow(w, row, dim);
}

// The distinct rows of one segment of occurrences [b0, b1) and, per row,
// its occurrences in ascending position: an open-addressing hash of the ids
// numbers the rows in order of first occurrence, then a counting pass
// places each occurrence after the earlier ones of its row (O(len), no
// comparison sort). Writes sorted[b0, b1); appends each row's first index
// into `sorted` to *begin and its row of weights to *rows. Returns the first
// out-of-range position, or -1.
template <typename I>
int64_t GroupSegment(const I* ids, int64_t b0, int64_t b1, int64_t base, int64_t limit, int64_t* sorted,
                     std::vector<int64_t>* begin, std::vector<int64_t>* rows) {
  thread_local std::vector<int64_t> slot_id;
  thread_local std::vector<int32_t> slot_group, group_of, count;
  const int64_t len = b1 - b0;
  int shift = 4;
  while ((int64_t{1} << shift) < 2 * len) ++shift;
  const uint64_t mask = (uint64_t{1} << shift) - 1;
  slot_id.assign(static_cast<size_t>(mask + 1), -1);
  slot_group.resize(static_cast<size_t>(mask + 1));
  group_of.resize(static_cast<size_t>(len));
  count.clear();
  begin->clear();
  rows->clear();
  for (int64_t k = b0; k < b1; ++k) {
    const int64_t id = static_cast<int64_t>(ids[k]);
    if (id < 0 || id >= limit) return k;
    uint64_t h = (static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ull) >> (64 - shift);
    while (slot_id[h] != -1 && slot_id[h] != id) h = (h + 1) & mask;
    if (slot_id[h] == -1) {
      slot_id[h] = id;
      slot_group[h] = static_cast<int32_t>(count.size());
      count.push_back(0);
      rows->push_back(base + id);
    }
    const int32_t grp = slot_group[h];
    group_of[k - b0] = grp;
    ++count[grp];
  }
  int64_t at = b0;
  for (size_t grp = 0; grp < count.size(); ++grp) {
    begin->push_back(at);
    const int64_t c = count[grp];
    count[grp] = static_cast<int32_t>(at - b0);  // now the group's fill cursor
    at += c;
  }
  for (int64_t k = b0; k < b1; ++k) sorted[b0 + count[group_of[k - b0]]++] = k;
  return -1;
}

template <typename W, typename I>
Status BackwardTyped(const ExecContext& ctx, const EmbeddingRowLayout& layout, const SparseOptimizerConfig& c,
                     const Bags& g, const I* ids, const float* grad_out, W* weights) {
  const int64_t n = g.num_ids;
  const int64_t nb = g.num_bags();
  if (nb >= (int64_t{1} << 31) || n >= (int64_t{1} << 31)) {
    return InvalidArgument("EmbeddingBagBackwardUpdate: at most 2^31-1 bags and ids a call");
  }
  // Per-occurrence arrays reused across calls on this thread (fresh ones
  // would be fresh pages, faulted in every step).
  // (References: a lambda naming a thread_local would see the running
  // worker's own instance, not the caller's.)
  struct Scratch {
    std::vector<int32_t> bag_of;
    std::vector<int64_t> grad_at;  // per occurrence: its bag's row of grad_out (element offset)
    std::vector<int64_t> sorted, group_begin, group_row;
    std::vector<std::vector<int64_t>> seg_begin_of, seg_rows_of;
  };
  thread_local Scratch scratch_of_caller;
  Scratch& sc = scratch_of_caller;
  std::vector<int32_t>& bag_of = sc.bag_of;
  std::vector<int64_t>& grad_at = sc.grad_at;
  std::vector<int64_t>& sorted = sc.sorted;
  std::vector<int64_t>& group_begin = sc.group_begin;
  std::vector<int64_t>& group_row = sc.group_row;
  std::vector<std::vector<int64_t>>& seg_begin_of = sc.seg_begin_of;
  std::vector<std::vector<int64_t>>& seg_rows_of = sc.seg_rows_of;
  bag_of.resize(static_cast<size_t>(n));
  grad_at.resize(static_cast<size_t>(n));
  sorted.resize(static_cast<size_t>(n));
  const int64_t dim = g.dim, out_width = g.tables * g.dim;
  const bool need_bag = g.psw == nullptr && g.mean;  // coef() reads bag lengths
  ctx.pool->ParallelFor(nb, 4096, [&](int64_t q0, int64_t q1) {
    // Bag q is sample q % batch of table q / batch: one division a chunk,
    // then (sample, table) steps along (a division per id cost as much as
    // the row's update).
    int64_t t = q0 / g.batch, b = q0 % g.batch;
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t at = b * out_width + t * dim;
      for (int64_t k = g.offsets[q]; k < g.offsets[q + 1]; ++k) {
        if (need_bag) bag_of[k] = static_cast<int32_t>(q);
        grad_at[k] = at;
      }
      if (++b == g.batch) {
        b = 0;
        ++t;
      }
    }
  });
  // Segments grouped independently: one per table (their rows are
  // disjoint), or all ids at once when they index weights directly.
  const int64_t num_seg = g.table_offsets != nullptr ? g.tables : 1;
  seg_begin_of.resize(static_cast<size_t>(num_seg));
  seg_rows_of.resize(static_cast<size_t>(num_seg));
  std::vector<int64_t> bad(static_cast<size_t>(num_seg), -1);
  ctx.pool->ParallelForChunks(num_seg, 1, [&](int64_t s, int64_t, int64_t) {
    const int64_t b0 = g.table_offsets != nullptr ? g.offsets[s * g.batch] : 0;
    const int64_t b1 = g.table_offsets != nullptr ? g.offsets[(s + 1) * g.batch] : n;
    bad[s] = GroupSegment(ids, b0, b1, g.base(s), g.table_offsets != nullptr ? g.limit(s) : g.rows, sorted.data(),
                          &seg_begin_of[s], &seg_rows_of[s]);
  });
  for (int64_t k : bad) {
    if (k >= 0) return BadId("EmbeddingBagBackwardUpdate", g, k, static_cast<int64_t>(ids[k]));
  }
  group_begin.clear();
  group_row.clear();
  for (int64_t s = 0; s < num_seg; ++s) {
    group_begin.insert(group_begin.end(), seg_begin_of[s].begin(), seg_begin_of[s].end());
    group_row.insert(group_row.end(), seg_rows_of[s].begin(), seg_rows_of[s].end());
  }
  group_begin.push_back(n);
  const int64_t num_groups = static_cast<int64_t>(group_row.size());
  const float bc1 =
      c.kind == SparseOptimizer::kAdam ? static_cast<float>(1.0 - std::pow(double(c.beta1), double(c.step))) : 1.0f;
  const float bc2 =
      c.kind == SparseOptimizer::kAdam ? static_cast<float>(1.0 - std::pow(double(c.beta2), double(c.step))) : 1.0f;
  auto grad_row = [&](int64_t k) { return grad_out + grad_at[k]; };
  auto coef = [&](int64_t k) {
    if (g.psw != nullptr) return g.psw[k];
    const int64_t q = bag_of[k];
    return g.mean ? 1.0f / static_cast<float>(g.offsets[q + 1] - g.offsets[q]) : 1.0f;
  };
  const bool scaled = g.psw != nullptr || g.mean;
  ctx.pool->ParallelFor(num_groups, kGroupGrain, [&](int64_t r0, int64_t r1) {
    thread_local std::vector<float> grad, scratch;
    grad.resize(static_cast<size_t>(dim));
    scratch.resize(static_cast<size_t>(dim));
    float* gr = grad.data();
    const int64_t grad_bytes = dim * static_cast<int64_t>(sizeof(float));
    // Gradient rows are prefetched a fixed number of occurrences ahead
    // (a hot row's group has many, each a random row of grad_out), weight
    // rows a few groups ahead (random rows: latency bound).
    const int64_t occ_end = group_begin[r1];
    int64_t pf = group_begin[r0];
    for (; pf < std::min(occ_end, group_begin[r0] + kPrefetchDistance); ++pf) PrefetchRow(grad_row(sorted[pf]), grad_bytes);
    for (int64_t r = r0; r < r1; ++r) {
      if (r + kPrefetchDistance < r1) {
        PrefetchRow(weights + group_row[r + kPrefetchDistance] * g.row_width, layout.row_bytes());
      }
      // Keep the occurrence prefetch kPrefetchDistance past this group's end.
      for (; pf < std::min(occ_end, group_begin[r + 1] + kPrefetchDistance); ++pf) {
        PrefetchRow(grad_row(sorted[pf]), grad_bytes);
      }
      // The sum starts from the first occurrence's term, then adds the rest
      // in ascending position.
      const int64_t i0 = group_begin[r], i1 = group_begin[r + 1];
      const float* go = grad_row(sorted[i0]);
      if (scaled) {
        const float w0 = coef(sorted[i0]);
        for (int64_t j = 0; j < dim; ++j) gr[j] = w0 * go[j];
      } else {
        std::memcpy(gr, go, static_cast<size_t>(dim) * sizeof(float));
      }
      for (int64_t i = i0 + 1; i < i1; ++i) {
        const int64_t k = sorted[i];
        if (scaled) {
          AddScaledRow(gr, grad_row(k), coef(k), dim);
        } else {
          AddRow(gr, grad_row(k), dim);
        }
      }
      UpdateRow(layout, c, bc1, bc2, weights + group_row[r] * g.row_width, gr, scratch.data());
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
