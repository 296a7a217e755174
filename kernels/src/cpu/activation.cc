// Activations: relu, elu (param = alpha), leaky relu (param = negative slope).
#include <cmath>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "cpu_ops.h"

namespace foresight::kernels::cpu {

namespace {

// ReLU and its gradient, branch-free: o[i] = x[i] > 0 ? v[i] : 0 with v = x
// (forward) or v = grad (backward). The sign of an activation is random,
// so a branch per element mispredicts about half the time: the backward
// pass ran at a fraction of the memory rate (it took longer than the
// dropout forward, Philox included).
void ReluSelect(const float* x, const float* v, float* o, int64_t s, int64_t e) {
  int64_t i = s;
#if defined(__AVX2__)
  const __m256 zero = _mm256_setzero_ps();
  for (; i + 8 <= e; i += 8) {
    const __m256 pos = _mm256_cmp_ps(_mm256_loadu_ps(x + i), zero, _CMP_GT_OQ);
    _mm256_storeu_ps(o + i, _mm256_and_ps(pos, _mm256_loadu_ps(v + i)));
  }
#endif
  for (; i < e; ++i) o[i] = x[i] > 0.0f ? v[i] : 0.0f;
}

}  // namespace

Status Activate(const ExecContext& ctx, Activation act, float param, const Tensor& x, Tensor* out) {
  const float* px = x.data<float>();
  float* po = out->data<float>();
  ctx.pool->ParallelFor(x.numel(), kElementGrain, [&](int64_t s, int64_t e) {
    switch (act) {
      case Activation::kRelu:
        ReluSelect(px, px, po, s, e);
        break;
      case Activation::kLeakyRelu:
        for (int64_t i = s; i < e; ++i) po[i] = px[i] > 0.0f ? px[i] : px[i] * param;
        break;
      case Activation::kElu:
        for (int64_t i = s; i < e; ++i) po[i] = px[i] > 0.0f ? px[i] : param * std::expm1(px[i]);
        break;
    }
  });
  return Status::OK();
}

Status ActivateBackward(const ExecContext& ctx, Activation act, float param, const Tensor& x,
                        const Tensor& grad_out, Tensor* grad_x) {
  const float* px = x.data<float>();
  const float* pg = grad_out.data<float>();
  float* po = grad_x->data<float>();
  ctx.pool->ParallelFor(x.numel(), kElementGrain, [&](int64_t s, int64_t e) {
    switch (act) {
      case Activation::kRelu:
        ReluSelect(px, pg, po, s, e);
        break;
      case Activation::kLeakyRelu:
        for (int64_t i = s; i < e; ++i) po[i] = px[i] > 0.0f ? pg[i] : pg[i] * param;
        break;
      case Activation::kElu:
        for (int64_t i = s; i < e; ++i) po[i] = px[i] > 0.0f ? pg[i] : pg[i] * param * std::exp(px[i]);
        break;
    }
  });
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
