// Naive serial references for the ops in foresight/kernels/transformer.h, in
// double: attention materialises each sequence's whole score matrix, the
// textbook way, and its backward is the plain chain rule through it. Plain
// loops, no tiles, no online softmax.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "foresight/core/rng.h"
#include "foresight/kernels/transformer.h"

namespace foresight::reference {

struct RefAttention {
  int64_t heads = 1;
  bool causal = false;
  double dropout = 0.0;
  double scale = 0.0;  // 0: 1 / sqrt(D)
  RngKey rng;          // the op's ctx.rng
};

// q, k, v, out: [T, H * D] row-major; cu: offsets [B + 1].
inline std::vector<double> AttentionForward(const RefAttention& a, const std::vector<double>& q,
                                            const std::vector<double>& k, const std::vector<double>& v,
                                            const std::vector<int64_t>& cu, int64_t width) {
  const int64_t d = width / a.heads;
  const double scale = a.scale != 0.0 ? a.scale : 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> out(q.size(), 0.0);
  for (size_t b = 0; b + 1 < cu.size(); ++b) {
    const int64_t base = cu[b], len = cu[b + 1] - cu[b];
    for (int64_t h = 0; h < a.heads; ++h) {
      const RngKey key = kernels::AttentionDropoutKey(a.rng, static_cast<int64_t>(b), h);
      for (int64_t i = 0; i < len; ++i) {
        const int64_t n = a.causal ? i + 1 : len;
        std::vector<double> s(static_cast<size_t>(n));
        double mx = -INFINITY;
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < d; ++x) dot += q[(base + i) * width + h * d + x] * k[(base + j) * width + h * d + x];
          s[j] = scale * dot;
          mx = std::max(mx, s[j]);
        }
        double z = 0;
        for (int64_t j = 0; j < n; ++j) z += std::exp(s[j] - mx);
        for (int64_t j = 0; j < n; ++j) {
          double w = std::exp(s[j] - mx) / z;
          if (a.dropout > 0) {
            w = kernels::AttentionDropoutKeep(key, i, j, static_cast<float>(a.dropout)) ? w / (1.0 - a.dropout) : 0.0;
          }
          for (int64_t x = 0; x < d; ++x) out[(base + i) * width + h * d + x] += w * v[(base + j) * width + h * d + x];
        }
      }
    }
  }
  return out;
}

// Gradients of AttentionForward for grad_out go, through the full softmax
// Jacobian (no saved statistics).
inline void AttentionBackward(const RefAttention& a, const std::vector<double>& q, const std::vector<double>& k,
                              const std::vector<double>& v, const std::vector<int64_t>& cu, int64_t width,
                              const std::vector<double>& go, std::vector<double>* gq, std::vector<double>* gk,
                              std::vector<double>* gv) {
  const int64_t d = width / a.heads;
  const double scale = a.scale != 0.0 ? a.scale : 1.0 / std::sqrt(static_cast<double>(d));
  gq->assign(q.size(), 0.0);
  gk->assign(q.size(), 0.0);
  gv->assign(q.size(), 0.0);
  for (size_t b = 0; b + 1 < cu.size(); ++b) {
    const int64_t base = cu[b], len = cu[b + 1] - cu[b];
    for (int64_t h = 0; h < a.heads; ++h) {
      const RngKey key = kernels::AttentionDropoutKey(a.rng, static_cast<int64_t>(b), h);
      auto at = [&](const std::vector<double>& m, int64_t row, int64_t x) { return m[(base + row) * width + h * d + x]; };
      for (int64_t i = 0; i < len; ++i) {
        const int64_t n = a.causal ? i + 1 : len;
        std::vector<double> s(n), p(n), dp(n), mask(n, 1.0);
        double mx = -INFINITY, z = 0;
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < d; ++x) dot += at(q, i, x) * at(k, j, x);
          s[j] = scale * dot;
          mx = std::max(mx, s[j]);
        }
        for (int64_t j = 0; j < n; ++j) z += std::exp(s[j] - mx);
        for (int64_t j = 0; j < n; ++j) {
          p[j] = std::exp(s[j] - mx) / z;
          if (a.dropout > 0) {
            mask[j] = kernels::AttentionDropoutKeep(key, i, j, static_cast<float>(a.dropout)) ? 1.0 / (1.0 - a.dropout)
                                                                                              : 0.0;
          }
          // out_i = sum_j p_j mask_j v_j
          double g = 0;
          for (int64_t x = 0; x < d; ++x) {
            g += at(go, i, x) * at(v, j, x);
            (*gv)[(base + j) * width + h * d + x] += p[j] * mask[j] * at(go, i, x);
          }
          dp[j] = g * mask[j];
        }
        double dot_pdp = 0;
        for (int64_t j = 0; j < n; ++j) dot_pdp += p[j] * dp[j];
        for (int64_t j = 0; j < n; ++j) {
          const double ds = p[j] * (dp[j] - dot_pdp) * scale;
          for (int64_t x = 0; x < d; ++x) {
            (*gq)[(base + i) * width + h * d + x] += ds * at(k, j, x);
            (*gk)[(base + j) * width + h * d + x] += ds * at(q, i, x);
          }
        }
      }
    }
  }
}

// h = x + bias + residual (bias / residual empty: none); out = LN(h).
inline std::vector<double> LayerNormForward(const std::vector<double>& x, const std::vector<double>& bias,
                                            const std::vector<double>& residual, const std::vector<double>& gamma,
                                            const std::vector<double>& beta, double eps, int64_t cols) {
  const int64_t rows = static_cast<int64_t>(x.size()) / cols;
  std::vector<double> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> h(cols);
    double mu = 0;
    for (int64_t j = 0; j < cols; ++j) {
      h[j] = x[r * cols + j] + (bias.empty() ? 0.0 : bias[j]) + (residual.empty() ? 0.0 : residual[r * cols + j]);
      mu += h[j];
    }
    mu /= static_cast<double>(cols);
    double var = 0;
    for (int64_t j = 0; j < cols; ++j) var += (h[j] - mu) * (h[j] - mu);
    var /= static_cast<double>(cols);
    for (int64_t j = 0; j < cols; ++j) out[r * cols + j] = (h[j] - mu) / std::sqrt(var + eps) * gamma[j] + beta[j];
  }
  return out;
}

inline double Gelu(kernels::GeluForm form, double u) {
  if (form == kernels::GeluForm::kErf) return 0.5 * u * (1.0 + std::erf(u / std::sqrt(2.0)));
  const double c = std::sqrt(2.0 / M_PI);
  return 0.5 * u * (1.0 + std::tanh(c * (u + 0.044715 * u * u * u)));
}

}  // namespace foresight::reference
