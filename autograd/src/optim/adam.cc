#include <algorithm>
#include <cmath>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "optimizers.h"

namespace foresight::autograd::internal {

StatusOr<std::unique_ptr<Optimizer>> Adam::Make(const OptimizerOptions& o, std::vector<Parameter*> p,
                                                bool decoupled) {
  std::unique_ptr<Adam> opt(new Adam(o, std::move(p), decoupled));
  FS_RETURN_IF_ERROR(opt->AddSlot("m"));
  FS_RETURN_IF_ERROR(opt->AddSlot("v"));
  return std::unique_ptr<Optimizer>(std::move(opt));
}

// Bias-corrected Adam as torch.optim.Adam / AdamW compute it:
//   adam:  g += wd * w (coupled L2, the GCN/GAT papers' setting)
//   adamw: w *= 1 - lr * wd (decoupled)
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2  (wd w, b1 m, b2 v and the
//   shrink w * (1 - lr wd) fused into their adds: std::fma, the same in the
//   scalar and the AVX2 loop)
//   w -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// The step count t is shared by all parameters (one per Step call).
Status Adam::Step(const ExecContext& ctx) {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i]->grad().defined()) FS_RETURN_IF_ERROR(CheckStep(i));
  }
  ThreadPool* pool = ctx.pool != nullptr ? ctx.pool : DefaultThreadPool();
  const double t = static_cast<double>(step_ + 1);
  const float b1 = options_.beta1, b2 = options_.beta2, eps = options_.eps;
  const float step_size = static_cast<float>(options_.lr / (1.0 - std::pow(static_cast<double>(b1), t)));
  const float bc2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(static_cast<double>(b2), t)));
  const float coupled_wd = decoupled_ ? 0.0f : options_.weight_decay;
  const float shrink = decoupled_ ? std::fma(-options_.lr, options_.weight_decay, 1.0f) : 1.0f;  // explicit: see below
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
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter* p = params_[i];
    if (!p->grad().defined()) continue;
    float* w = p->mutable_value().data<float>();
    const float* g = p->grad().data<float>();
    float* m = slot(0, i).data<float>();
    float* v = slot(1, i).data<float>();
    const int64_t n = p->value().numel();
    for (int64_t b = 0; b < n; b += kStepGrain) {
      chunks.push_back({w + b, g + b, m + b, v + b, std::min(kStepGrain, n - b)});
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
  ++step_;
  return Status::OK();
}

}  // namespace foresight::autograd::internal
