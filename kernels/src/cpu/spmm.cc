// SpMM aggregation. Forward: parallel over destination rows, each row summed
// (or maxed) over its in-edges in CSR order with a contiguous feature loop.
// Backward for sum/mean is a gather over the transposed CSR (each source
// row sums its out-edges in order), never an atomic scatter. Max backward
// routes each output gradient to its argmax source (see BackwardMax).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

namespace {

// Sources ahead of the one being summed whose rows are asked for early:
// rows are random in a table far beyond L2, and a row's sum overlaps only
// the few loads the out-of-order window holds.
constexpr int64_t kRowsAhead = 3;

// Hints every cache line of a row of f floats (a hint: never faults).
inline void PrefetchRow(const float* row, int64_t f) {
  for (int64_t j = 0; j < f; j += 16) __builtin_prefetch(row + j);
}

template <typename I>
void SpmmSumMean(const ExecContext& ctx, const Csr& csr, bool mean, const Tensor& x, Tensor* out) {
  const int64_t num_dst = csr.num_dst(), f = x.size(1);
  const int64_t* ip = csr.indptr.data<int64_t>();
  const I* idx = csr.indices.data<I>();
  const float* w = csr.edge_weight.defined() ? csr.edge_weight.data<float>() : nullptr;
  const float* px = x.data<float>();
  float* po = out->data<float>();
  ctx.pool->ParallelFor(num_dst, DstGrain(num_dst, csr.num_edges(), f), [&](int64_t v0, int64_t v1) {
    const int64_t e_end = ip[v1];  // the chunk's last edge + 1: prefetches run across destinations
    for (int64_t v = v0; v < v1; ++v) {
      float* __restrict o = po + v * f;
      std::fill(o, o + f, 0.0f);
      const int64_t e0 = ip[v], e1 = ip[v + 1];
      for (int64_t e = e0; e < e1; ++e) {
        const float* __restrict xr = px + static_cast<int64_t>(idx[e]) * f;
        if (e + kRowsAhead < e_end) PrefetchRow(px + static_cast<int64_t>(idx[e + kRowsAhead]) * f, f);
        if (w != nullptr) {
          const float we = w[e];
          for (int64_t j = 0; j < f; ++j) o[j] += we * xr[j];
        } else {
          for (int64_t j = 0; j < f; ++j) o[j] += xr[j];
        }
      }
      if (mean && e1 > e0) {
        const float deg = static_cast<float>(e1 - e0);
        for (int64_t j = 0; j < f; ++j) o[j] /= deg;
      }
    }
  });
}

// o = max(o, xr) elementwise, b = k where xr wins; strict > so the first
// maximum wins ties. Explicit blends: left to itself the compiler turns the
// selects into branchy masked stores, which mispredict on real data.
inline void MaxStep(const float* __restrict xr, int32_t k, int64_t f, float* __restrict o,
                    int32_t* __restrict b) {
  int64_t j = 0;
#if defined(__AVX2__)
  const __m256i kv = _mm256_set1_epi32(k);
  for (; j + 8 <= f; j += 8) {
    const __m256 xv = _mm256_loadu_ps(xr + j);
    const __m256 ov = _mm256_loadu_ps(o + j);
    const __m256 gt = _mm256_cmp_ps(xv, ov, _CMP_GT_OQ);
    _mm256_storeu_ps(o + j, _mm256_blendv_ps(ov, xv, gt));
    const __m256i bv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + j));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + j),
                        _mm256_blendv_epi8(bv, kv, _mm256_castps_si256(gt)));
  }
#endif
  for (; j < f; ++j) {
    const bool gt = xr[j] > o[j];
    b[j] = gt ? k : b[j];
    o[j] = gt ? xr[j] : o[j];
  }
}

// The running argmax is kept as the winning edge's offset in the row (i32,
// the width of the float compare, so the blend vectorises) and turned into
// a source id once per row.
template <typename I>
void SpmmMax(const ExecContext& ctx, const Csr& csr, const Tensor& x, Tensor* out, Tensor* argmax) {
  const int64_t num_dst = csr.num_dst(), f = x.size(1);
  const int64_t* ip = csr.indptr.data<int64_t>();
  const I* idx = csr.indices.data<I>();
  const float* px = x.data<float>();
  float* po = out->data<float>();
  int64_t* pa = argmax != nullptr ? argmax->data<int64_t>() : nullptr;
  ctx.pool->ParallelFor(num_dst, DstGrain(num_dst, csr.num_edges(), f), [&](int64_t v0, int64_t v1) {
    std::vector<int32_t> best(static_cast<size_t>(f));
    int32_t* __restrict b = best.data();
    for (int64_t v = v0; v < v1; ++v) {
      float* __restrict o = po + v * f;
      int64_t* __restrict a = pa != nullptr ? pa + v * f : nullptr;
      const int64_t e0 = ip[v], e1 = ip[v + 1];
      if (e0 == e1) {
        std::fill(o, o + f, 0.0f);
        if (a != nullptr) std::fill(a, a + f, int64_t{-1});
        continue;
      }
      std::memcpy(o, px + static_cast<int64_t>(idx[e0]) * f, static_cast<size_t>(f) * sizeof(float));
      std::fill(b, b + f, 0);
      for (int64_t e = e0 + 1; e < e1; ++e) {
        const float* __restrict xr = px + static_cast<int64_t>(idx[e]) * f;
        if (e + 1 < e1) __builtin_prefetch(px + static_cast<int64_t>(idx[e + 1]) * f);
        MaxStep(xr, static_cast<int32_t>(e - e0), f, o, b);
      }
      if (a != nullptr) {
        for (int64_t j = 0; j < f; ++j) a[j] = static_cast<int64_t>(idx[e0 + b[j]]);
      }
    }
  });
}

template <typename I>
void BackwardSumMean(const ExecContext& ctx, const Csr& csr, const Csr& csr_t, const Tensor& edge_perm,
                     bool mean, const Tensor& grad_out, Tensor* grad_x) {
  const int64_t num_src = csr.num_src, f = grad_out.size(1);
  const int64_t* ip = csr.indptr.data<int64_t>();
  const int64_t* tp = csr_t.indptr.data<int64_t>();
  const I* tidx = csr_t.indices.data<I>();
  const float* w = csr.edge_weight.defined() && !mean ? csr.edge_weight.data<float>() : nullptr;
  const int64_t* perm = w != nullptr ? edge_perm.data<int64_t>() : nullptr;
  const float* pg = grad_out.data<float>();
  float* px = grad_x->data<float>();
  ctx.pool->ParallelFor(num_src, DstGrain(num_src, csr.num_edges(), f), [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      float* __restrict g = px + u * f;
      std::fill(g, g + f, 0.0f);
      const int64_t k1 = tp[u + 1];
      for (int64_t k = tp[u]; k < k1; ++k) {
        const int64_t v = static_cast<int64_t>(tidx[k]);
        const float* __restrict go = pg + v * f;
        if (k + 1 < k1) __builtin_prefetch(pg + static_cast<int64_t>(tidx[k + 1]) * f);
        if (w != nullptr || mean) {
          const float we = mean ? 1.0f / static_cast<float>(ip[v + 1] - ip[v]) : w[perm[k]];
          for (int64_t j = 0; j < f; ++j) g[j] += we * go[j];
        } else {
          for (int64_t j = 0; j < f; ++j) g[j] += go[j];
        }
      }
    }
  });
}

// Max backward routes grad_out[v, f] to argmax[v, f]: one write per output
// element, so a scatter in ascending v is cheap (O(num_dst * F), versus
// O(E * F) for a gather). It runs in parallel over fixed blocks of 16
// feature columns; within a block v ascends, so each element's sum has the
// serial order whatever the thread count, and no two chunks touch the same
// element.
void BackwardMax(const ExecContext& ctx, const Csr& csr, const Tensor& argmax, const Tensor& grad_out,
                 Tensor* grad_x) {
  constexpr int64_t kCols = 16;
  const int64_t num_dst = csr.num_dst(), num_src = csr.num_src, f = grad_out.size(1);
  const int64_t* pa = argmax.data<int64_t>();
  const float* pg = grad_out.data<float>();
  float* px = grad_x->data<float>();
  ctx.pool->ParallelFor(num_src * f, kElementGrain, [&](int64_t b, int64_t e) { std::fill(px + b, px + e, 0.0f); });
  ctx.pool->ParallelFor(f, kCols, [&](int64_t c0, int64_t c1) {
    for (int64_t v = 0; v < num_dst; ++v) {
      const int64_t* a = pa + v * f;
      const float* g = pg + v * f;
      for (int64_t j = c0; j < c1; ++j) {
        if (a[j] >= 0) px[a[j] * f + j] += g[j];
      }
    }
  });
}

}  // namespace

Status Spmm(const ExecContext& ctx, const Csr& csr, Reduce reduce, const Tensor& x, Tensor* out,
            Tensor* argmax) {
  WithIndexType(csr.indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    if (reduce == Reduce::kMax) {
      SpmmMax<I>(ctx, csr, x, out, argmax);
    } else {
      SpmmSumMean<I>(ctx, csr, reduce == Reduce::kMean, x, out);
    }
  });
  return Status::OK();
}

Status SpmmBackward(const ExecContext& ctx, const Csr& csr, const Csr& csr_t, const Tensor& edge_perm,
                    Reduce reduce, const Tensor& grad_out, const Tensor& argmax, Tensor* grad_x) {
  WithIndexType(csr.indices.dtype(), [&](auto tag) {
    using I = decltype(tag);
    if (reduce == Reduce::kMax) {
      BackwardMax(ctx, csr, argmax, grad_out, grad_x);
    } else {
      BackwardSumMean<I>(ctx, csr, csr_t, edge_perm, reduce == Reduce::kMean, grad_out, grad_x);
    }
  });
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
