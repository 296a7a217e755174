// GELU, erf and tanh forms, with the bias of the linear layer before it
// fused in. The backward reads only the forward's input (x and bias), so the
// layer keeps x + bias's pre-image and not the activation's output.
#include <cmath>

#include "cpu_ops.h"
#include "fast_math.h"
#include "transformer_ops.h"

namespace foresight::kernels::cpu {

namespace {

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;  // 1 / sqrt(2 pi)
constexpr float kTanhC = 0.79788456080286536f;       // sqrt(2 / pi)
constexpr float kTanhA = 0.044715f;

// gelu(u) and gelu'(u) over one row. Templated on the bias so the loops
// have no conditional load (GCC leaves a loop with `bias ? bias[i] : 0`
// scalar) and vectorise.
template <bool kBias>
void ForwardRow(GeluForm form, const float* __restrict x, const float* __restrict bias, float* __restrict o,
                int64_t n) {
  if (form == GeluForm::kErf) {
    for (int64_t i = 0; i < n; ++i) {
      const float u = kBias ? x[i] + bias[i] : x[i];
      o[i] = 0.5f * u * (1.0f + FastErf(u * kInvSqrt2));
    }
  } else {
    // 0.5 u (1 + tanh(z)) = u * sigmoid(2 z).
    for (int64_t i = 0; i < n; ++i) {
      const float u = kBias ? x[i] + bias[i] : x[i];
      const float z = kTanhC * (u + kTanhA * u * u * u);
      o[i] = u / (1.0f + FastExp(-2.0f * z));
    }
  }
}

// g and o may be the same buffer (element i is read before it is written),
// so neither is __restrict.
template <bool kBias>
void BackwardRow(GeluForm form, const float* __restrict x, const float* __restrict bias, const float* g, float* o,
                 int64_t n) {
  if (form == GeluForm::kErf) {
    // d/du u Phi(u) = Phi(u) + u phi(u).
#pragma GCC ivdep
    for (int64_t i = 0; i < n; ++i) {
      const float u = kBias ? x[i] + bias[i] : x[i];
      const float cdf = 0.5f * (1.0f + FastErf(u * kInvSqrt2));
      const float pdf = kInvSqrt2Pi * FastExp(-0.5f * u * u);
      o[i] = g[i] * (cdf + u * pdf);
    }
  } else {
    // d/du u s(2z) = s + u * 2 s (1 - s) z', z' = c (1 + 3 a u^2).
#pragma GCC ivdep
    for (int64_t i = 0; i < n; ++i) {
      const float u = kBias ? x[i] + bias[i] : x[i];
      const float z = kTanhC * (u + kTanhA * u * u * u);
      const float s = 1.0f / (1.0f + FastExp(-2.0f * z));
      const float dz = kTanhC * (1.0f + 3.0f * kTanhA * u * u);
      o[i] = g[i] * (s + 2.0f * u * s * (1.0f - s) * dz);
    }
  }
}

}  // namespace

Status Gelu(const ExecContext& ctx, GeluForm form, const Tensor& x, const Tensor& bias, Tensor* out) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const float* px = x.data<float>();
  const float* pb = bias.defined() ? bias.data<float>() : nullptr;
  float* po = out->data<float>();
  ctx.pool->ParallelFor(rows, RowGrain(cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (pb != nullptr) {
        ForwardRow<true>(form, px + r * cols, pb, po + r * cols, cols);
      } else {
        ForwardRow<false>(form, px + r * cols, pb, po + r * cols, cols);
      }
    }
  });
  return Status::OK();
}

Status GeluBackward(const ExecContext& ctx, GeluForm form, const Tensor& x, const Tensor& bias,
                    const Tensor& grad_out, Tensor* grad_x) {
  const int64_t rows = x.size(0), cols = x.size(1);
  const float* px = x.data<float>();
  const float* pb = bias.defined() ? bias.data<float>() : nullptr;
  const float* pg = grad_out.data<float>();
  float* po = grad_x->data<float>();
  ctx.pool->ParallelFor(rows, RowGrain(cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (pb != nullptr) {
        BackwardRow<true>(form, px + r * cols, pb, pg + r * cols, po + r * cols, cols);
      } else {
        BackwardRow<false>(form, px + r * cols, pb, pg + r * cols, po + r * cols, cols);
      }
    }
  });
  return Status::OK();
}

}  // namespace foresight::kernels::cpu
