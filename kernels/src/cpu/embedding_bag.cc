// Embedding bags on the CPU. Forward: bags walked in id order (table-major)
// in fixed chunks over the pool, each bag summed in id order straight into
// its slice of out, while a cursor a fixed number of ids ahead (across bag
// and table ends) prefetches rows (a random row gather is bound by the
// misses in flight); with one id in every bag, blocks of samples walked
// table by table, each output row a copy (0.0f + row).
// Backward + update: the occurrences of each table (contiguous, since bags
// are table-major) grouped by row with a hash and a counting pass; each
// row's gradient summed in ascending position (from its first term) and
// applied once. With enough tables a task groups one table and applies it
// at once; with few, the tables are grouped first and each one's rows are
// then spread over the pool. No step depends on the thread count, so
// results are bitwise identical for any pool.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__AVX__) || defined(__F16C__)
#include <immintrin.h>
#endif

#include "../check.h"
#include "../embedding_bag_args.h"
#include "../embedding_bag_values.h"
#include "cpu_ops.h"

namespace foresight::kernels::cpu {

namespace {

constexpr int kPrefetchDistance = 8;  // ids ahead whose rows are prefetched
constexpr int64_t kForwardIdsPerChunk = 1024;  // forward: about this many ids a chunk
constexpr int64_t kOneIdBlockIds = 1664;       // forward, one id a bag: ids a block (64 samples of 26 tables)
constexpr int64_t kGroupsAhead = 8;    // backward: rows (and occurrences) ahead that are prefetched
constexpr int64_t kGroupGrain = 32;    // distinct rows per backward chunk, when tables are few
// Tables per thread from which each task groups and applies whole tables
// (the load stays balanced within about 1 / this).
constexpr int64_t kSegmentsPerThread = 4;

// ---- row conversion (f16 rows widen exactly; stores round to nearest even) ----

// The f32 rows in blocks of 64 floats (eight AVX registers), each block's
// loads issued before its stores. GCC's own vectorisation of these loops
// (n unknown at compile time, acc and src possibly overlapping) interleaved
// loads and stores 8 floats at a time behind an overlap check and a scalar
// tail; with it the bag-of-one forward took about 20% more CPU than with a
// copy loop of fixed length 64, and with these about 6% more (the rows' loads
// that miss wait for the page walk, and the fewer instructions a row costs,
// the more rows' loads the out-of-order window holds). The backward's
// SGD step and gradient copy gained 3-5% the same way (bench/RESULTS.md,
// "Embedding bags, session 15"). Each lane rounds the same single product
// and sum as the scalar loop (this file is compiled with -ffp-contract=off),
// so the bits are unchanged.
constexpr int64_t kBlock = 64;

// dst[j] = op(dst[j], src[j]) for j < n; op takes floats and, in blocks,
// __m256 (GCC's vector operators, a scalar operand broadcast). A block's
// destination is loaded only where op reads it.
template <typename Op>
inline void MapRow(float* __restrict dst, const float* __restrict src, int64_t n, const Op& op) {
  int64_t j = 0;
#if defined(__AVX__)
  constexpr int kRegs = kBlock / 8;
  for (; j + kBlock <= n; j += kBlock) {
    __m256 v[kRegs];
    for (int u = 0; u < kRegs; ++u) v[u] = op(_mm256_loadu_ps(dst + j + 8 * u), _mm256_loadu_ps(src + j + 8 * u));
    for (int u = 0; u < kRegs; ++u) _mm256_storeu_ps(dst + j + 8 * u, v[u]);
  }
#endif
  for (; j < n; ++j) dst[j] = op(dst[j], src[j]);
}

inline void AddRow(float* acc, const float* src, int64_t n) {
  MapRow(acc, src, n, [](auto a, auto s) { return a + s; });
}
inline void AddScaledRow(float* acc, const float* src, float w, int64_t n) {
  MapRow(acc, src, n, [w](auto a, auto s) { return a + w * s; });
}
// acc = 0.0f + src (or + w * src): a sum's first term, with the bits of
// adding it to a zeroed acc (-0.0 becomes +0.0 either way).
inline void SetRow(float* acc, const float* src, int64_t n) {
  MapRow(acc, src, n, [](auto, auto s) { return 0.0f + s; });
}
inline void SetScaledRow(float* acc, const float* src, float w, int64_t n) {
  MapRow(acc, src, n, [w](auto, auto s) { return 0.0f + w * s; });
}
inline void CopyRow(float* dst, const float* src, int64_t n) {
  MapRow(dst, src, n, [](auto, auto s) { return s; });
}
// w -= lr * g.
inline void SgdRow(float* w, const float* g, float lr, int64_t n) {
  MapRow(w, g, n, [lr](auto x, auto gi) { return x - lr * gi; });
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
inline void SetRow(float* acc, const Half* src, int64_t n) {
  LoadRow(src, acc, n);
  for (int64_t j = 0; j < n; ++j) acc[j] = 0.0f + acc[j];
}
inline void SetScaledRow(float* acc, const Half* src, float w, int64_t n) {
  LoadRow(src, acc, n);
  for (int64_t j = 0; j < n; ++j) acc[j] = 0.0f + w * acc[j];
}

inline void Prefetch(const void* p) { __builtin_prefetch(p, 0, 1); }
// Where loads whose values do not matter go (so they are not optimised out).
volatile uint32_t g_touch_sink;
// Every 64-byte line of a row of `bytes` bytes.
inline void PrefetchRow(const void* p, int64_t bytes) {
  for (int64_t b = 0; b < bytes; b += 64) Prefetch(static_cast<const char*>(p) + b);
}

// ---- value checks (embedding_bag_values.h) ----

using Bags = internal::EmbeddingBagArgs;

StatusOr<Bags> ReadBags(const char* op, const EmbeddingRowLayout& layout, const Tensor& weights,
                        const Tensor& table_offsets, const Tensor& ids, const Tensor& offsets,
                        const Tensor& psw, Pooling pooling, const Tensor& pooled, bool* one_id_per_bag) {
  const Bags g = internal::UnpackEmbeddingBagArgs(layout, weights, table_offsets, ids, offsets, psw, pooling, pooled);
  FS_RETURN_IF_ERROR(internal::CheckBagOffsetValues(op, g.offsets, g.num_bags(), g.num_ids, one_id_per_bag));
  if (g.table_offsets != nullptr) {
    FS_RETURN_IF_ERROR(internal::CheckTableOffsetValues(op, g.table_offsets, g.tables, g.rows));
  }
  return g;
}

// ---- backward + update: one row ----

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
      SgdRow(w, g, c.lr, dim);
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

// ---- forward ----

template <typename W, typename I>
Status ForwardTyped(const ExecContext& ctx, const Bags& g, const W* weights, const I* ids, float* out) {
  const int64_t num_bags = g.num_bags();
  const int64_t avg = std::max<int64_t>(1, g.num_ids / num_bags);
  const int64_t grain = std::max<int64_t>(1, kForwardIdsPerChunk / avg);
  const int64_t row_bytes = g.dim * static_cast<int64_t>(sizeof(W));
  const int64_t out_width = g.tables * g.dim;
  std::vector<int64_t> bad(static_cast<size_t>(ThreadPool::NumChunks(num_bags, grain)), -1);
  // Bags in their table-major order (the order of ids): a chunk's rows come
  // from one table or two, where walking each sample's tables in turn
  // cycled through all of them (25-30% less CPU at 4 ids a bag, 7-15% at
  // one on the development VM; bench/RESULTS.md, "Embedding bags at one id
  // a bag"). That VM translates in 4 KB pages, so every random row still
  // costs a page walk; the walks' page-table reads are what stay closer.
  ctx.pool->ParallelForChunks(num_bags, grain, [&](int64_t chunk, int64_t q0, int64_t q1) {
    // A cursor kPrefetchDistance ids ahead of the work, across bag and
    // table ends, prefetches rows: a random gather is bound by how many
    // misses are in flight.
    const int64_t k_end = g.offsets[q1];
    int64_t pk = g.offsets[q0];
    int64_t pt = q0 / g.batch;
    int64_t p_table_end = g.offsets[(pt + 1) * g.batch];
    auto prefetch_to = [&](int64_t k_stop) {
      for (k_stop = std::min(k_stop, k_end); pk < k_stop; ++pk) {
        while (pk >= p_table_end) p_table_end = g.offsets[(++pt + 1) * g.batch];
        const int64_t id = static_cast<int64_t>(ids[pk]);
        // An id out of range is reported below; only in-range rows are touched.
        if (id >= 0 && id < g.limit(pt)) PrefetchRow(weights + (g.base(pt) + id) * g.row_width, row_bytes);
      }
    };
    int64_t t = q0 / g.batch, b = q0 - t * g.batch;
    int64_t base = g.base(t), limit = g.limit(t);
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t k0 = g.offsets[q], k1 = g.offsets[q + 1];
      prefetch_to(k1 + kPrefetchDistance);
      float* o = out + b * out_width + t * g.dim;
      if (k0 == k1) std::fill(o, o + g.dim, 0.0f);
      for (int64_t k = k0; k < k1; ++k) {
        const int64_t id = static_cast<int64_t>(ids[k]);
        if (id < 0 || id >= limit) {
          bad[chunk] = k;
          return;
        }
        const W* row = weights + (base + id) * g.row_width;
        // The first term is added to 0.0f like the rest (not copied), so
        // a -0.0 weight sums as it always has.
        if (k == k0) {
          if (g.psw != nullptr) {
            SetScaledRow(o, row, g.psw[k], g.dim);
          } else {
            SetRow(o, row, g.dim);
          }
        } else if (g.psw != nullptr) {
          AddScaledRow(o, row, g.psw[k], g.dim);
        } else {
          AddRow(o, row, g.dim);
        }
      }
      // A bag of one needs no division (x / 1 is x, bit for bit).
      if (g.mean && k1 - k0 > 1) {
        const float len = static_cast<float>(k1 - k0);
        for (int64_t j = 0; j < g.dim; ++j) o[j] = o[j] / len;
      }
      if (++b == g.batch) {
        b = 0;
        ++t;
        if (t < g.tables) {
          base = g.base(t);
          limit = g.limit(t);
        }
      }
    }
  });
  int64_t first = -1;
  for (int64_t k : bad) {
    if (k >= 0 && (first < 0 || k < first)) first = k;
  }
  if (first >= 0) return internal::BadEmbeddingId("EmbeddingBagForward", g, first, static_cast<int64_t>(ids[first]));
  return Status::OK();
}

// Every bag holds one id (offsets[q] == q), so bag (t, b) is ids[t * batch +
// b] and its output row is 0.0f + row (times its weight): the general
// path's bits (a bag of one is never divided by its length, which would not
// change them). A chunk is a block of samples walked table by table, so the
// reads stay in one table for a while and the writes in the block's few
// pages of out (bench/RESULTS.md, "Embedding bags at one id a bag").
// The walk is kept lean on purpose (see the row helpers above): a
// prefetch cursor that followed the walk across table ends (its state in a
// lambda, a table lookup per id) cost more CPU than prefetching within the
// table and restarting the prefetches at each table's first rows; with
// both changes the forward takes 11-21% less CPU at one id a bag
// (bench/RESULTS.md, "Embedding bags, session 15").
template <typename W, typename I>
Status ForwardOneIdPerBag(const ExecContext& ctx, const Bags& g, const W* weights, const I* ids, float* out) {
  const int64_t grain = std::max<int64_t>(1, kOneIdBlockIds / g.tables);
  const int64_t row_bytes = g.dim * static_cast<int64_t>(sizeof(W));
  const int64_t out_width = g.tables * g.dim, rw = g.row_width;
  std::vector<int64_t> bad(static_cast<size_t>(ThreadPool::NumChunks(g.batch, grain)), -1);
  ctx.pool->ParallelForChunks(g.batch, grain, [&](int64_t chunk, int64_t b0, int64_t b1) {
    for (int64_t t = 0; t < g.tables; ++t) {
      const W* table = weights + g.base(t) * rw;
      const I* table_ids = ids + t * g.batch;
      const float* psw = g.psw != nullptr ? g.psw + t * g.batch : nullptr;
      // An id out of range is reported below; only in-range rows are
      // prefetched (the unsigned compare also rejects negative ids).
      const uint64_t limit = static_cast<uint64_t>(g.limit(t));
      auto prefetch = [&](int64_t b) {
        const uint64_t id = static_cast<uint64_t>(static_cast<int64_t>(table_ids[b]));
        if (id < limit) PrefetchRow(table + static_cast<int64_t>(id) * rw, row_bytes);
      };
      for (int64_t b = b0; b < std::min(b1, b0 + kPrefetchDistance); ++b) prefetch(b);
      float* o = out + b0 * out_width + t * g.dim;
      for (int64_t b = b0; b < b1; ++b, o += out_width) {
        if (b + kPrefetchDistance < b1) prefetch(b + kPrefetchDistance);
        const int64_t id = static_cast<int64_t>(table_ids[b]);
        if (static_cast<uint64_t>(id) >= limit) {
          bad[chunk] = t * g.batch + b;
          return;
        }
        if (psw != nullptr) {
          SetScaledRow(o, table + id * rw, psw[b], g.dim);
        } else {
          SetRow(o, table + id * rw, g.dim);
        }
      }
    }
  });
  // A chunk stops at its first bad id in walk order: report the first in id order.
  int64_t first = -1;
  for (int64_t k : bad) {
    if (k >= 0 && (first < 0 || k < first)) first = k;
  }
  if (first >= 0) return internal::BadEmbeddingId("EmbeddingBagForward", g, first, static_cast<int64_t>(ids[first]));
  return Status::OK();
}

// ---- backward + update ----

// The occurrences of one segment of bags grouped by row. Groups are
// numbered by first occurrence; each group's occurrences are listed in
// ascending position, as the element offset of their bag's row of grad_out
// (and their coefficient, when scaled). Buffers are reused across calls.
struct SegmentGroups {
  std::vector<int32_t> slot;      // hash slots: a group, or -1 (its row is the key)
  std::vector<int32_t> group_of;  // per occurrence of the segment
  std::vector<int32_t> begin;     // per group, and one past the last: start in grad_at
  std::vector<int64_t> row;       // per group: its row of weights
  std::vector<int64_t> grad_at;   // grouped occurrences: element offset into grad_out
  std::vector<float> coef;        // grouped occurrences: psw or 1/len (when scaled)
  int64_t num_groups() const { return static_cast<int64_t>(row.size()); }
};

// Groups the bags [q0, q1) (one table's, or all) by row: an open-addressing
// hash of the rows numbers them by first occurrence and counts them, then a
// second walk places each occurrence after its row's earlier ones (O(len),
// no comparison sort). A slot holds only its group (4 bytes; the row is
// read from the group), so the table of a 2048-id segment fits in L1.
// Returns the first out-of-range id's position, or -1.
// kOneId: every bag holds one id (offsets[q] == q), so the walks skip the
// offsets (bench/RESULTS.md, "Embedding bags, session 15").
template <bool kOneId, typename I>
int64_t GroupBags(const Bags& g, const I* ids, int64_t q0, int64_t q1, bool scaled, SegmentGroups* sg) {
  const int64_t k0 = g.offsets[q0], len = g.offsets[q1] - k0;
  int shift = 4;
  while ((int64_t{1} << shift) < 2 * len) ++shift;
  const uint64_t mask = (uint64_t{1} << shift) - 1;
  sg->slot.assign(static_cast<size_t>(mask + 1), -1);
  sg->group_of.resize(static_cast<size_t>(len));
  sg->row.resize(static_cast<size_t>(len));
  sg->begin.resize(static_cast<size_t>(len) + 1);
  int32_t* __restrict slot = sg->slot.data();
  int32_t* __restrict group_of = sg->group_of.data();
  int64_t* __restrict row = sg->row.data();
  int32_t* __restrict count = sg->begin.data();  // counts first, then fill cursors
  int32_t groups = 0;
  int64_t t = q0 / g.batch;
  const int64_t qt_end = std::min(q1, (t + 1) * g.batch);  // bags of table t in [q0, q1)
  int64_t base = g.base(t), limit = g.table_offsets != nullptr ? g.limit(t) : g.rows, t_end = qt_end;
  for (int64_t q = q0; q < q1; ++q) {
    if (q == t_end) {
      ++t;
      t_end = std::min(q1, t_end + g.batch);
      base = g.base(t);
      limit = g.table_offsets != nullptr ? g.limit(t) : g.rows;
    }
    const int64_t ka = kOneId ? q : g.offsets[q], kb = kOneId ? q + 1 : g.offsets[q + 1];
    for (int64_t k = ka; k < kb; ++k) {
      const int64_t id = static_cast<int64_t>(ids[k]);
      if (id < 0 || id >= limit) return k;
      const int64_t key = base + id;
      uint64_t h = (static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> (64 - shift);
      int32_t grp;
      while ((grp = slot[h]) >= 0 && row[grp] != key) h = (h + 1) & mask;
      if (grp < 0) {
        grp = groups++;
        slot[h] = grp;
        row[grp] = key;
        count[grp] = 0;
      }
      group_of[k - k0] = grp;
      ++count[grp];
    }
  }
  sg->row.resize(static_cast<size_t>(groups));
  int32_t at = 0;
  for (int32_t grp = 0; grp < groups; ++grp) {
    const int32_t n = count[grp];
    count[grp] = at;
    at += n;
  }
  count[groups] = at;
  sg->grad_at.resize(static_cast<size_t>(len));
  if (scaled) sg->coef.resize(static_cast<size_t>(len));
  int64_t* __restrict grad_at = sg->grad_at.data();
  float* __restrict coef = sg->coef.data();
  int32_t* __restrict cursor = count;
  // Walk again: bag q is sample b of table t (stepped, no division per bag).
  const int64_t out_width = g.tables * g.dim;
  t = q0 / g.batch;
  int64_t b = q0 - t * g.batch;
  for (int64_t q = q0; q < q1; ++q) {
    const int64_t at_row = b * out_width + t * g.dim;
    const int64_t ka = kOneId ? q : g.offsets[q], kb = kOneId ? q + 1 : g.offsets[q + 1];
    for (int64_t k = ka; k < kb; ++k) {
      const int32_t pos = cursor[group_of[k - k0]]++;
      grad_at[pos] = at_row;
      if (scaled) coef[pos] = g.psw != nullptr ? g.psw[k] : 1.0f / static_cast<float>(kb - ka);
    }
    if (++b == g.batch) {
      b = 0;
      ++t;
    }
  }
  // The cursors now sit at each group's end: shift them to starts.
  for (int32_t grp = groups; grp > 0; --grp) count[grp] = count[grp - 1];
  count[0] = 0;
  sg->begin.resize(static_cast<size_t>(groups) + 1);
  return -1;
}

// Sums each of groups [r0, r1)'s gradient rows (from its first term, then
// in ascending position) and applies one update to its row.
template <typename W>
void ApplyGroups(const EmbeddingRowLayout& layout, const SparseOptimizerConfig& c, float bc1, float bc2,
                 const Bags& g, const SegmentGroups& sg, int64_t r0, int64_t r1, const float* grad_out,
                 bool scaled, W* weights) {
  thread_local std::vector<float> grad, scratch;
  const int64_t dim = g.dim;
  grad.resize(static_cast<size_t>(dim));
  scratch.resize(static_cast<size_t>(dim));
  float* gr = grad.data();
  const int32_t* begin = sg.begin.data();
  const int64_t* row = sg.row.data();
  const int64_t* grad_at = sg.grad_at.data();
  const float* coef = sg.coef.data();
  const int64_t grad_bytes = dim * static_cast<int64_t>(sizeof(float));
  const int64_t ahead = kGroupsAhead;
  // Weight rows are prefetched `ahead` groups on, gradient rows `ahead`
  // occurrences on (a hot row's group has many, each a random row of
  // grad_out): both are random rows, so latency bound.
  // One load from each row first. On the development VM prefetching the
  // rows 0, 8 or 16 groups ahead took the same time (a prefetch whose page
  // is not in the TLB did little), while a pass of plain loads, which the
  // core overlaps, leaves the pages in the TLB (a task's rows are those of
  // one table) so that the prefetches below work: this loop's median CPU
  // time fell from 7.99 to 6.66 ms (one interleaved run, bench/RESULTS.md).
  uint32_t touched = 0;
  for (int64_t r = r0; r < r1; ++r) touched ^= *reinterpret_cast<const uint16_t*>(weights + row[r] * g.row_width);
  g_touch_sink = touched;
  for (int64_t r = r0; r < std::min(r1, r0 + ahead); ++r) PrefetchRow(weights + row[r] * g.row_width, layout.row_bytes());
  const int64_t occ_end = begin[r1];
  int64_t pf = begin[r0];
  for (; pf < std::min(occ_end, begin[r0] + ahead); ++pf) PrefetchRow(grad_out + grad_at[pf], grad_bytes);
  for (int64_t r = r0; r < r1; ++r) {
    if (r + ahead < r1) PrefetchRow(weights + row[r + ahead] * g.row_width, layout.row_bytes());
    for (; pf < std::min(occ_end, begin[r + 1] + ahead); ++pf) PrefetchRow(grad_out + grad_at[pf], grad_bytes);
    const int64_t i0 = begin[r], i1 = begin[r + 1];
    const float* go = grad_out + grad_at[i0];
    if (scaled) {
      const float w0 = coef[i0];
      for (int64_t j = 0; j < dim; ++j) gr[j] = w0 * go[j];
    } else {
      CopyRow(gr, go, dim);
    }
    for (int64_t i = i0 + 1; i < i1; ++i) {
      if (scaled) {
        AddScaledRow(gr, grad_out + grad_at[i], coef[i], dim);
      } else {
        AddRow(gr, grad_out + grad_at[i], dim);
      }
    }
    UpdateRow(layout, c, bc1, bc2, weights + row[r] * g.row_width, gr, scratch.data());
  }
}

template <typename W, typename I>
Status BackwardTyped(const ExecContext& ctx, const EmbeddingRowLayout& layout, const SparseOptimizerConfig& c,
                     const Bags& g, bool one_id_per_bag, const I* ids, const float* grad_out, W* weights) {
  const int64_t n = g.num_ids;
  if (g.num_bags() >= (int64_t{1} << 31) || n >= (int64_t{1} << 31)) {
    return InvalidArgument("EmbeddingBagBackwardUpdate: at most 2^31-1 bags and ids a call");
  }
  const float bc1 =
      c.kind == SparseOptimizer::kAdam ? static_cast<float>(1.0 - std::pow(double(c.beta1), double(c.step))) : 1.0f;
  const float bc2 =
      c.kind == SparseOptimizer::kAdam ? static_cast<float>(1.0 - std::pow(double(c.beta2), double(c.step))) : 1.0f;
  const bool scaled = g.psw != nullptr || g.mean;
  // Segments grouped independently: one per table (their rows are
  // disjoint), or all bags at once when ids index weights directly.
  const int64_t num_seg = g.table_offsets != nullptr ? g.tables : 1;
  std::vector<int64_t> bad(static_cast<size_t>(num_seg), -1);
  if (num_seg >= kSegmentsPerThread * ctx.pool->num_threads()) {
    // Enough segments to balance the threads: each task groups one segment
    // and applies it at once, in thread-local buffers that stay in cache.
    ctx.pool->ParallelForChunks(num_seg, 1, [&](int64_t s, int64_t, int64_t) {
      thread_local SegmentGroups sg;
      bad[s] = one_id_per_bag ? GroupBags<true>(g, ids, s * g.batch, (s + 1) * g.batch, scaled, &sg)
                              : GroupBags<false>(g, ids, s * g.batch, (s + 1) * g.batch, scaled, &sg);
      if (bad[s] < 0) ApplyGroups(layout, c, bc1, bc2, g, sg, 0, sg.num_groups(), grad_out, scaled, weights);
    });
  } else {
    // Few segments: group them side by side, then spread each one's groups
    // over the pool.
    thread_local std::vector<SegmentGroups> segs_of_caller;
    std::vector<SegmentGroups>& segs = segs_of_caller;
    segs.resize(static_cast<size_t>(num_seg));
    ctx.pool->ParallelForChunks(num_seg, 1, [&](int64_t s, int64_t, int64_t) {
      const int64_t q0 = num_seg == 1 ? 0 : s * g.batch, q1 = num_seg == 1 ? g.num_bags() : (s + 1) * g.batch;
      bad[s] = one_id_per_bag ? GroupBags<true>(g, ids, q0, q1, scaled, &segs[s])
                              : GroupBags<false>(g, ids, q0, q1, scaled, &segs[s]);
    });
    for (int64_t s = 0; s < num_seg; ++s) {
      if (bad[s] >= 0) continue;
      const SegmentGroups& sg = segs[s];
      ctx.pool->ParallelFor(sg.num_groups(), kGroupGrain, [&](int64_t r0, int64_t r1) {
        ApplyGroups(layout, c, bc1, bc2, g, sg, r0, r1, grad_out, scaled, weights);
      });
    }
  }
  for (int64_t k : bad) {
    if (k >= 0) return internal::BadEmbeddingId("EmbeddingBagBackwardUpdate", g, k, static_cast<int64_t>(ids[k]));
  }
  return Status::OK();
}

}  // namespace

Status EmbeddingBagForward(const ExecContext& ctx, const EmbeddingRowLayout& layout, const Tensor& weights,
                           const Tensor& table_offsets, const Tensor& ids, const Tensor& offsets,
                           const Tensor& per_sample_weights, Pooling pooling, Tensor* out) {
  bool one_id_per_bag = false;
  FS_ASSIGN_OR_RETURN(Bags g, ReadBags("EmbeddingBagForward", layout, weights, table_offsets, ids, offsets,
                                       per_sample_weights, pooling, *out, &one_id_per_bag));
  if (g.num_bags() == 0) return Status::OK();
  return WithIndexType(ids.dtype(), [&](auto i) {
    using I = decltype(i);
    auto run = [&](const auto* w) {
      return one_id_per_bag ? ForwardOneIdPerBag(ctx, g, w, ids.data<I>(), out->data<float>())
                            : ForwardTyped(ctx, g, w, ids.data<I>(), out->data<float>());
    };
    return layout.dtype == DType::kF16 ? run(weights.data<Half>()) : run(weights.data<float>());
  });
}

Status EmbeddingBagBackwardUpdate(const ExecContext& ctx, const EmbeddingRowLayout& layout,
                                  const SparseOptimizerConfig& config, const Tensor& table_offsets,
                                  const Tensor& ids, const Tensor& offsets, const Tensor& per_sample_weights,
                                  Pooling pooling, const Tensor& grad_out, Tensor* weights) {
  bool one_id_per_bag = false;
  FS_ASSIGN_OR_RETURN(Bags g, ReadBags("EmbeddingBagBackwardUpdate", layout, *weights, table_offsets, ids, offsets,
                                       per_sample_weights, pooling, grad_out, &one_id_per_bag));
  if (g.batch == 0) return Status::OK();
  return WithIndexType(ids.dtype(), [&](auto i) {
    using I = decltype(i);
    if (layout.dtype == DType::kF16) {
      return BackwardTyped(ctx, layout, config, g, one_id_per_bag, ids.data<I>(), grad_out.data<float>(),
                           weights->data<Half>());
    }
    return BackwardTyped(ctx, layout, config, g, one_id_per_bag, ids.data<I>(), grad_out.data<float>(),
                         weights->data<float>());
  });
}

}  // namespace foresight::kernels::cpu
