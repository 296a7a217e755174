// Naive serial references for the embedding-bag ops: one bag at a time, one
// distinct row at a time, the formulas of ops.h written out plainly. Rows
// are embeddings only ([rows x dim] floats, already widened for f16); the
// optimizer state is a separate [rows x state] array. The kernels keep
// state beside each row; the tests convert.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include "foresight/core/dtype.h"

namespace foresight::reference {

struct RefBags {
  int64_t batch = 0, tables = 0, dim = 0;
  std::vector<int64_t> table_offsets;  // empty: ids are rows
  std::vector<int64_t> ids, offsets;   // offsets: tables * batch + 1
  std::vector<float> psw;              // empty: weight 1
  bool mean = false;
  int64_t row(int64_t k, int64_t t) const { return (table_offsets.empty() ? 0 : table_offsets[t]) + ids[k]; }
};

// out [batch, tables * dim].
inline std::vector<float> EmbeddingBagForwardRef(const RefBags& g, const std::vector<float>& rows) {
  std::vector<float> out(static_cast<size_t>(g.batch * g.tables * g.dim), 0.0f);
  for (int64_t t = 0; t < g.tables; ++t) {
    for (int64_t b = 0; b < g.batch; ++b) {
      const int64_t q = t * g.batch + b;
      float* o = &out[(b * g.tables + t) * g.dim];
      for (int64_t k = g.offsets[q]; k < g.offsets[q + 1]; ++k) {
        const float w = g.psw.empty() ? 1.0f : g.psw[k];
        for (int64_t j = 0; j < g.dim; ++j) o[j] += w * rows[g.row(k, t) * g.dim + j];
      }
      const int64_t len = g.offsets[q + 1] - g.offsets[q];
      if (g.mean && len > 0) {
        for (int64_t j = 0; j < g.dim; ++j) o[j] = o[j] / static_cast<float>(len);
      }
    }
  }
  return out;
}

struct RefOptimizer {
  int kind = 0;  // 0 sgd, 1 rowwise adagrad, 2 adam
  float lr = 0.01f, eps = 1e-8f, beta1 = 0.9f, beta2 = 0.999f, weight_decay = 0.0f;
  int64_t step = 1;
};

// Updates rows (and state: 0, 1 or 2*dim floats a row) in place. With f16,
// each updated embedding is rounded to f16 (rows hold the widened values).
inline void EmbeddingBagUpdateRef(const RefBags& g, const std::vector<float>& grad_out, const RefOptimizer& o,
                                  bool f16, std::vector<float>* rows, std::vector<float>* state) {
  // Each distinct row's gradient, summed over its occurrences in ascending
  // position.
  std::map<int64_t, std::vector<float>> grads;
  const int64_t n = static_cast<int64_t>(g.ids.size());
  std::vector<int64_t> bag_of(static_cast<size_t>(n));
  for (int64_t q = 0; q < g.batch * g.tables; ++q) {
    for (int64_t k = g.offsets[q]; k < g.offsets[q + 1]; ++k) bag_of[k] = q;
  }
  for (int64_t k = 0; k < n; ++k) {
    const int64_t q = bag_of[k], t = q / g.batch, b = q % g.batch;
    auto& acc = grads[g.row(k, t)];
    float coef = 1.0f;
    if (!g.psw.empty()) {
      coef = g.psw[k];
    } else if (g.mean) {
      coef = 1.0f / static_cast<float>(g.offsets[q + 1] - g.offsets[q]);
    }
    // The sum starts from the first occurrence's term.
    const bool first = acc.empty();
    if (first) acc.assign(static_cast<size_t>(g.dim), 0.0f);
    for (int64_t j = 0; j < g.dim; ++j) {
      const float term = coef * grad_out[(b * g.tables + t) * g.dim + j];
      acc[j] = first ? term : acc[j] + term;
    }
  }
  const float bc1 = static_cast<float>(1.0 - std::pow(double(o.beta1), double(o.step)));
  const float bc2 = static_cast<float>(1.0 - std::pow(double(o.beta2), double(o.step)));
  for (auto& [r, gr] : grads) {
    float* w = &(*rows)[r * g.dim];
    if (o.weight_decay > 0) {
      for (int64_t j = 0; j < g.dim; ++j) gr[j] += o.weight_decay * w[j];
    }
    if (o.kind == 0) {
      for (int64_t j = 0; j < g.dim; ++j) w[j] = w[j] - o.lr * gr[j];
    } else if (o.kind == 1) {
      float& s = (*state)[r];
      float ss = 0.0f;
      for (int64_t j = 0; j < g.dim; ++j) ss += gr[j] * gr[j];
      s += ss / static_cast<float>(g.dim);
      const float denom = std::sqrt(s) + o.eps;
      for (int64_t j = 0; j < g.dim; ++j) w[j] = w[j] - o.lr * gr[j] / denom;
    } else {
      float* m = &(*state)[r * 2 * g.dim];
      float* v = m + g.dim;
      for (int64_t j = 0; j < g.dim; ++j) {
        m[j] = o.beta1 * m[j] + (1.0f - o.beta1) * gr[j];
        v[j] = o.beta2 * v[j] + (1.0f - o.beta2) * (gr[j] * gr[j]);
        w[j] = w[j] - o.lr * (m[j] / bc1) / (std::sqrt(v[j] / bc2) + o.eps);
      }
    }
    if (f16) {
      for (int64_t j = 0; j < g.dim; ++j) w[j] = HalfToFloat(FloatToHalf(w[j]));
    }
  }
}

}  // namespace foresight::reference
