// Naive serial references for the ops in foresight/kernels/ops.h. Templated
// on the element type so tests can run them in double as the "exact" forward
// for finite-difference gradient checks. Plain loops, no threads, no tricks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace foresight::reference {

// A CSR by destination: row v lists v's in-neighbours.
struct RefCsr {
  int64_t num_src = 0;
  std::vector<int64_t> indptr{0};
  std::vector<int64_t> indices;
  std::vector<double> weight;  // empty when unweighted
  int64_t num_dst() const { return static_cast<int64_t>(indptr.size()) - 1; }
  int64_t num_edges() const { return static_cast<int64_t>(indices.size()); }
};

// c[m x n] = alpha * op(a) op(b) + beta * c (all row-major, contiguous).
template <typename T>
std::vector<T> Gemm(const std::vector<T>& a, bool ta, const std::vector<T>& b, bool tb, int64_t m, int64_t n,
                    int64_t k, T alpha, T beta, std::vector<T> c) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T s = 0;
      for (int64_t p = 0; p < k; ++p) {
        const T av = ta ? a[p * m + i] : a[i * k + p];
        const T bv = tb ? b[j * k + p] : b[p * n + j];
        s += av * bv;
      }
      c[i * n + j] = alpha * s + (beta == T(0) ? T(0) : beta * c[i * n + j]);
    }
  }
  return c;
}

enum class RefReduce { kSum, kMean, kMax };

// out[v, :] = reduce over in-edges; argmax (for max) gets the winning source.
template <typename T>
std::vector<T> Spmm(const RefCsr& g, RefReduce r, const std::vector<T>& x, int64_t f,
                    std::vector<int64_t>* argmax = nullptr) {
  std::vector<T> out(static_cast<size_t>(g.num_dst() * f), T(0));
  if (argmax != nullptr) argmax->assign(out.size(), -1);
  for (int64_t v = 0; v < g.num_dst(); ++v) {
    const int64_t deg = g.indptr[v + 1] - g.indptr[v];
    for (int64_t j = 0; j < f; ++j) {
      T acc = 0;
      int64_t best = -1;
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
        const int64_t u = g.indices[e];
        const T xv = x[u * f + j];
        if (r == RefReduce::kMax) {
          if (best < 0 || xv > acc) {
            acc = xv;
            best = u;
          }
        } else {
          acc += (g.weight.empty() ? T(1) : T(g.weight[e])) * xv;
        }
      }
      if (r == RefReduce::kMean && deg > 0) acc /= T(deg);
      out[v * f + j] = acc;
      if (argmax != nullptr) (*argmax)[v * f + j] = best;
    }
  }
  return out;
}

// grad_x by a serial scatter over destinations in ascending order.
template <typename T>
std::vector<T> SpmmBackward(const RefCsr& g, RefReduce r, const std::vector<T>& grad_out, int64_t f,
                            const std::vector<int64_t>& argmax) {
  std::vector<T> gx(static_cast<size_t>(g.num_src * f), T(0));
  for (int64_t v = 0; v < g.num_dst(); ++v) {
    const int64_t deg = g.indptr[v + 1] - g.indptr[v];
    if (r == RefReduce::kMax) {
      for (int64_t j = 0; j < f; ++j) {
        if (argmax[v * f + j] >= 0) gx[argmax[v * f + j] * f + j] += grad_out[v * f + j];
      }
      continue;
    }
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      const T w = r == RefReduce::kMean ? T(1) / T(deg) : (g.weight.empty() ? T(1) : T(g.weight[e]));
      for (int64_t j = 0; j < f; ++j) gx[g.indices[e] * f + j] += w * grad_out[v * f + j];
    }
  }
  return gx;
}

// Transpose with edge_perm; rows ordered by original edge position.
inline RefCsr Transpose(const RefCsr& g, std::vector<int64_t>* perm) {
  RefCsr t;
  t.num_src = g.num_dst();
  t.indptr.assign(static_cast<size_t>(g.num_src + 1), 0);
  perm->clear();
  for (int64_t u = 0; u < g.num_src; ++u) {
    for (int64_t v = 0; v < g.num_dst(); ++v) {
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
        if (g.indices[e] != u) continue;
        t.indices.push_back(v);
        perm->push_back(e);
        if (!g.weight.empty()) t.weight.push_back(g.weight[e]);
      }
    }
    t.indptr[u + 1] = t.num_edges();
  }
  return t;
}

// GCN normalisation (self loop appended where missing).
inline RefCsr GcnNormalize(const RefCsr& g) {
  RefCsr out;
  out.num_src = g.num_src;
  for (int64_t v = 0; v < g.num_dst(); ++v) {
    bool self = false;
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      out.indices.push_back(g.indices[e]);
      self = self || g.indices[e] == v;
    }
    if (!self) out.indices.push_back(v);
    out.indptr.push_back(out.num_edges());
  }
  std::vector<int64_t> deg_out(static_cast<size_t>(g.num_src), 0);
  for (int64_t u : out.indices) ++deg_out[u];
  for (int64_t v = 0; v < out.num_dst(); ++v) {
    const double din = double(out.indptr[v + 1] - out.indptr[v]);
    for (int64_t e = out.indptr[v]; e < out.indptr[v + 1]; ++e) {
      out.weight.push_back(1.0 / std::sqrt(din * double(deg_out[out.indices[e]])));
    }
  }
  return out;
}

template <typename T>
std::vector<T> GatScores(const RefCsr& g, const std::vector<T>& el, const std::vector<T>& er, int64_t h,
                         T slope) {
  std::vector<T> s(static_cast<size_t>(g.num_edges() * h));
  for (int64_t v = 0; v < g.num_dst(); ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      for (int64_t j = 0; j < h; ++j) {
        const T z = el[g.indices[e] * h + j] + er[v * h + j];
        s[e * h + j] = z > 0 ? z : z * slope;
      }
    }
  }
  return s;
}

template <typename T>
std::vector<T> EdgeSoftmax(const RefCsr& g, const std::vector<T>& s, int64_t h) {
  std::vector<T> out(s.size());
  for (int64_t v = 0; v < g.num_dst(); ++v) {
    for (int64_t j = 0; j < h; ++j) {
      T m = -INFINITY, sum = 0;
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) m = std::max(m, s[e * h + j]);
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) sum += std::exp(s[e * h + j] - m);
      for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) out[e * h + j] = std::exp(s[e * h + j] - m) / sum;
    }
  }
  return out;
}

template <typename T>
std::vector<T> SpmmEdgeHeads(const RefCsr& g, const std::vector<T>& alpha, const std::vector<T>& x, int64_t h,
                             int64_t d) {
  std::vector<T> out(static_cast<size_t>(g.num_dst() * h * d), T(0));
  for (int64_t v = 0; v < g.num_dst(); ++v) {
    for (int64_t e = g.indptr[v]; e < g.indptr[v + 1]; ++e) {
      for (int64_t j = 0; j < h; ++j) {
        for (int64_t k = 0; k < d; ++k) {
          out[(v * h + j) * d + k] += alpha[e * h + j] * x[(g.indices[e] * h + j) * d + k];
        }
      }
    }
  }
  return out;
}

template <typename T>
std::vector<T> LogSoftmax(const std::vector<T>& x, int64_t n, int64_t c) {
  std::vector<T> out(x.size());
  for (int64_t i = 0; i < n; ++i) {
    T m = -INFINITY, s = 0;
    for (int64_t j = 0; j < c; ++j) m = std::max(m, x[i * c + j]);
    for (int64_t j = 0; j < c; ++j) s += std::exp(x[i * c + j] - m);
    for (int64_t j = 0; j < c; ++j) out[i * c + j] = x[i * c + j] - m - std::log(s);
  }
  return out;
}

template <typename T>
T NllLoss(const std::vector<T>& logp, const std::vector<int64_t>& labels, int64_t c) {
  T s = 0;
  int64_t n = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0) continue;
    s -= logp[i * c + labels[i]];
    ++n;
  }
  return n > 0 ? s / T(n) : T(0);
}

enum class RefActivation { kRelu, kElu, kLeakyRelu };

template <typename T>
T Activate(RefActivation a, T param, T x) {
  if (x > 0) return x;
  switch (a) {
    case RefActivation::kRelu: return T(0);
    case RefActivation::kLeakyRelu: return x * param;
    case RefActivation::kElu: return param * (std::exp(x) - T(1));
  }
  return x;
}

// dst[ids[i], :] += src[i, :] in order of i.
template <typename T>
void IndexAddRows(const std::vector<T>& src, const std::vector<int64_t>& ids, int64_t row, std::vector<T>* dst) {
  for (size_t i = 0; i < ids.size(); ++i) {
    for (int64_t j = 0; j < row; ++j) (*dst)[ids[i] * row + j] += src[i * row + j];
  }
}

}  // namespace foresight::reference
