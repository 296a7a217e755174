// Helpers shared by the kernel tests: random tensors and graphs, conversions
// to the naive references (tests/reference/kernels_reference.h), closeness
// and bitwise checks, and contexts with 1 and 3 threads.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/tensor.h"
#include "foresight/kernels/csr.h"
#include "reference/kernels_reference.h"

namespace foresight::kernels::test {

inline Tensor RandomF32(const Shape& shape, uint64_t seed, float lo = -1.0f, float hi = 1.0f) {
  Tensor t = Tensor::Empty(shape, DType::kF32);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

inline std::vector<float> ToVec(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.numel());
}

inline std::vector<double> ToDouble(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<double>(p, p + t.numel());
}

inline Tensor FromVec(const std::vector<float>& v, const Shape& shape) {
  Tensor t = Tensor::Empty(shape, DType::kF32);
  std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(float));
  return t;
}

inline Tensor IdsTensor(const std::vector<int64_t>& ids, DType dtype) {
  Tensor t = Tensor::Empty({static_cast<int64_t>(ids.size())}, dtype);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (dtype == DType::kI32) {
      t.data<int32_t>()[i] = static_cast<int32_t>(ids[i]);
    } else {
      t.data<int64_t>()[i] = ids[i];
    }
  }
  return t;
}

inline std::vector<int64_t> IdsVec(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = t.dtype() == DType::kI32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  }
  return v;
}

inline Csr FromRef(const reference::RefCsr& g, DType idx) {
  Csr c;
  c.num_src = g.num_src;
  c.indptr = IdsTensor(g.indptr, DType::kI64);
  c.indices = IdsTensor(g.indices, idx);
  if (!g.weight.empty()) {
    c.edge_weight = Tensor::Empty({g.num_edges()}, DType::kF32);
    for (int64_t e = 0; e < g.num_edges(); ++e) c.edge_weight.data<float>()[e] = static_cast<float>(g.weight[e]);
  }
  return c;
}

inline reference::RefCsr ToRef(const Csr& c) {
  reference::RefCsr g;
  g.num_src = c.num_src;
  g.indptr = IdsVec(c.indptr);
  g.indices = IdsVec(c.indices);
  if (c.edge_weight.defined()) {
    const std::vector<float> w = ToVec(c.edge_weight);
    g.weight.assign(w.begin(), w.end());
  }
  return g;
}

// A random block: degrees in [0, max_deg] (so some rows are empty), sources
// drawn with replacement (so some edges repeat), block convention kept
// loosely (any source in [0, num_src)).
inline reference::RefCsr RandomRefCsr(int64_t num_dst, int64_t num_src, int64_t max_deg, uint64_t seed,
                                      bool weighted = false) {
  std::mt19937_64 rng(seed);
  reference::RefCsr g;
  g.num_src = num_src;
  for (int64_t v = 0; v < num_dst; ++v) {
    const int64_t deg = num_src > 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(max_deg + 1)) : 0;
    for (int64_t k = 0; k < deg; ++k) g.indices.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(num_src)));
    g.indptr.push_back(g.num_edges());
  }
  if (weighted) {
    std::uniform_real_distribution<double> dist(0.1, 1.0);
    for (int64_t e = 0; e < g.num_edges(); ++e) g.weight.push_back(static_cast<float>(dist(rng)));
  }
  return g;
}

inline Csr RandomCsr(int64_t num_dst, int64_t num_src, int64_t max_deg, uint64_t seed, DType idx = DType::kI64,
                     bool weighted = false) {
  return FromRef(RandomRefCsr(num_dst, num_src, max_deg, seed, weighted), idx);
}

template <typename W>
void ExpectClose(const std::vector<float>& got, const std::vector<W>& want, double rtol, double atol,
                 const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double w = static_cast<double>(want[i]);
    const double tol = atol + rtol * std::fabs(w);
    if (!(std::fabs(static_cast<double>(got[i]) - w) <= tol)) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", expected " << w << " (tol " << tol
                    << ")";
      if (++reported >= 5) return;
    }
  }
}

inline bool BitwiseEqual(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// Sum of out * r: the scalar the finite-difference checks differentiate.
template <typename T>
double Dot(const std::vector<T>& a, const std::vector<double>& r) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * r[i];
  return s;
}

// Central-difference gradient of f at x (double precision), element by
// element; `stride` > 1 checks every stride-th element only.
template <typename F>
std::vector<double> NumericGrad(F f, std::vector<double> x, double h = 1e-4, size_t stride = 1,
                                std::vector<size_t>* checked = nullptr) {
  std::vector<double> g(x.size(), 0.0);
  for (size_t i = 0; i < x.size(); i += stride) {
    const double x0 = x[i];
    x[i] = x0 + h;
    const double fp = f(x);
    x[i] = x0 - h;
    const double fm = f(x);
    x[i] = x0;
    g[i] = (fp - fm) / (2 * h);
    if (checked != nullptr) checked->push_back(i);
  }
  return g;
}

// Compares analytic gradient (f32) with a numeric one at the checked indices.
inline void ExpectGradClose(const std::vector<float>& analytic, const std::vector<double>& numeric,
                            const std::vector<size_t>& checked, double rtol, double atol, const char* what) {
  ASSERT_EQ(analytic.size(), numeric.size()) << what;
  int reported = 0;
  for (size_t i : checked) {
    const double tol = atol + rtol * std::fabs(numeric[i]);
    if (!(std::fabs(analytic[i] - numeric[i]) <= tol)) {
      ADD_FAILURE() << what << ": d/dx[" << i << "] analytic " << analytic[i] << ", numeric " << numeric[i];
      if (++reported >= 5) return;
    }
  }
}

inline std::vector<double> RandomWeights(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> r(n);
  for (auto& v : r) v = dist(rng);
  return r;
}

// Contexts over private pools of 1 and 3 threads.
struct TwoPools {
  ThreadPool one{1};
  ThreadPool three{3};
  ExecContext ctx1 = CpuContext(7, &one);
  ExecContext ctx3 = CpuContext(7, &three);
};

}  // namespace foresight::kernels::test
