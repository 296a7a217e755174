// Dense optimizer updates on the CPU: elementwise loops over fixed chunks
// of kUpdateGrain elements (so results never depend on the thread count).
#include <algorithm>
#include <cmath>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

namespace {

// Elements per chunk of the update loops.
constexpr int64_t kUpdateGrain = 1 << 15;

}  // namespace

Status AdamUpdate(const ExecContext& ctx, const AdamUpdateArgs& args, const std::vector<DenseUpdateTensors>& params) {
  ThreadPool* pool = ctx.pool != nullptr ? ctx.pool : DefaultThreadPool();
  const float b1 = args.beta1, b2 = args.beta2, eps = args.eps;
  const float step_size = args.step_size, bc2_sqrt = args.bc2_sqrt;
  const float coupled_wd = args.coupled_wd, shrink = args.shrink;
  // Every parameter's chunks go to one parallel loop: a GNN has a handful
  // of small tensors, and a pool dispatch per tensor cost more than the
  // update itself. The update is elementwise, so results do not depend on
  // how chunks are spread.
  struct Chunk {
    float* w;
    const float* g;
    float* m;
    float* v;
    int64_t n;
  };
  std::vector<Chunk> chunks;
  for (const DenseUpdateTensors& p : params) {
    float* w = p.w.data<float>();
    const float* g = p.g.data<float>();
    float* m = p.s0.data<float>();
    float* v = p.s1.data<float>();
    const int64_t n = p.w.numel();
    for (int64_t b = 0; b < n; b += kUpdateGrain) {
      chunks.push_back({w + b, g + b, m + b, v + b, std::min(kUpdateGrain, n - b)});
    }
  }
  pool->ParallelFor(static_cast<int64_t>(chunks.size()), 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      float* __restrict w = chunks[c].w;
      const float* __restrict g = chunks[c].g;
      float* __restrict m = chunks[c].m;
      float* __restrict v = chunks[c].v;
      const int64_t n = chunks[c].n;
      int64_t j = 0;
#if defined(__AVX2__)
      // The scalar loop below, eight lanes at a time with the same IEEE
      // operations, so both give the same bits (scalar sqrt and division
      // kept the update compute-bound). The fused multiply-adds are
      // explicit in both: left to the compiler, contraction would differ
      // between the two loops.
      const __m256 vwd = _mm256_set1_ps(coupled_wd), vshrink = _mm256_set1_ps(shrink);
      const __m256 vb1 = _mm256_set1_ps(b1), v1b1 = _mm256_set1_ps(1.0f - b1);
      const __m256 vb2 = _mm256_set1_ps(b2), v1b2 = _mm256_set1_ps(1.0f - b2);
      const __m256 vstep = _mm256_set1_ps(step_size), vbc2 = _mm256_set1_ps(bc2_sqrt), veps = _mm256_set1_ps(eps);
      for (; j + 8 <= n; j += 8) {
        const __m256 wv = _mm256_loadu_ps(w + j);
        const __m256 gj = _mm256_fmadd_ps(vwd, wv, _mm256_loadu_ps(g + j));
        const __m256 mj = _mm256_fmadd_ps(vb1, _mm256_loadu_ps(m + j), _mm256_mul_ps(v1b1, gj));
        const __m256 vj = _mm256_fmadd_ps(vb2, _mm256_loadu_ps(v + j), _mm256_mul_ps(_mm256_mul_ps(v1b2, gj), gj));
        const __m256 den = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(vj), vbc2), veps);
        _mm256_storeu_ps(m + j, mj);
        _mm256_storeu_ps(v + j, vj);
        _mm256_storeu_ps(w + j, _mm256_fmsub_ps(wv, vshrink, _mm256_div_ps(_mm256_mul_ps(vstep, mj), den)));
      }
#endif
      for (; j < n; ++j) {
        const float gj = std::fma(coupled_wd, w[j], g[j]);
        m[j] = std::fma(b1, m[j], (1.0f - b1) * gj);
        v[j] = std::fma(b2, v[j], (1.0f - b2) * gj * gj);
        w[j] = std::fma(w[j], shrink, -(step_size * m[j] / (std::sqrt(v[j]) / bc2_sqrt + eps)));
      }
    }
  });
  return Status::OK();
}

// g += wd * w; buf = momentum * buf + g (buf starts at 0, so the first step
// sets buf = g as PyTorch does); w -= lr * buf.
Status SgdUpdate(const ExecContext& ctx, float lr, float wd, float mu, const std::vector<DenseUpdateTensors>& params) {
  ThreadPool* pool = ctx.pool != nullptr ? ctx.pool : DefaultThreadPool();
  const bool use_momentum = mu > 0.0f;
  for (const DenseUpdateTensors& p : params) {
    float* w = p.w.data<float>();
    const float* g = p.g.data<float>();
    float* buf = use_momentum ? p.s0.data<float>() : nullptr;
    pool->ParallelFor(p.w.numel(), kUpdateGrain, [=](int64_t b, int64_t e) {
      if (use_momentum) {
        for (int64_t j = b; j < e; ++j) {
          buf[j] = mu * buf[j] + (g[j] + wd * w[j]);
          w[j] -= lr * buf[j];
        }
      } else {
        for (int64_t j = b; j < e; ++j) w[j] -= lr * (g[j] + wd * w[j]);
      }
    });
  }
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
