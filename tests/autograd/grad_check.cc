#include "grad_check.h"

#include <algorithm>
#include <cstring>

namespace foresight::autograd::testing {

Tensor RandomTensor(const Shape& shape, uint64_t seed, float lo, float hi) {
  Tensor t = Tensor::Empty(shape, DType::kF32);
  const RngKey key = RngKey::FromSeed(seed);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = lo + (hi - lo) * key.Uniform(i, 0);
  return t;
}

kernels::Csr RandomBlock(int64_t num_dst, int64_t num_src, int max_degree, SelfLoops loops, uint64_t seed,
                         bool i32_indices) {
  const RngKey key = RngKey::FromSeed(seed);
  std::vector<int64_t> indptr{0}, indices;
  uint64_t draw = 0;
  for (int64_t v = 0; v < num_dst; ++v) {
    const bool self = loops == SelfLoops::kAll || (loops == SelfLoops::kSome && v % 2 == 0);
    int64_t degree = static_cast<int64_t>(key.Below(max_degree + 1, v, draw++));
    if (v % 4 == 3) degree = 0;  // empty rows (apart from a wanted self loop)
    std::vector<int64_t> row;
    while (static_cast<int64_t>(row.size()) < std::min<int64_t>(degree, num_src - 1)) {
      const int64_t u = static_cast<int64_t>(key.Below(num_src, v, draw++));
      if (u != v && std::find(row.begin(), row.end(), u) == row.end()) row.push_back(u);
    }
    if (self) {
      const int64_t at = static_cast<int64_t>(key.Below(row.size() + 1, v, draw++));
      row.insert(row.begin() + at, v);
    }
    indices.insert(indices.end(), row.begin(), row.end());
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  kernels::Csr csr;
  csr.num_src = num_src;
  csr.indptr = Tensor::Empty({num_dst + 1}, DType::kI64);
  std::memcpy(csr.indptr.raw_data(), indptr.data(), indptr.size() * sizeof(int64_t));
  const int64_t e = static_cast<int64_t>(indices.size());
  if (i32_indices) {
    csr.indices = Tensor::Empty({e}, DType::kI32);
    for (int64_t i = 0; i < e; ++i) csr.indices.data<int32_t>()[i] = static_cast<int32_t>(indices[i]);
  } else {
    csr.indices = Tensor::Empty({e}, DType::kI64);
    std::memcpy(csr.indices.raw_data(), indices.data(), indices.size() * sizeof(int64_t));
  }
  return csr;
}

namespace {

int64_t IndexAt(const Tensor& indices, int64_t e) {
  return indices.dtype() == DType::kI32 ? indices.data<int32_t>()[e] : indices.data<int64_t>()[e];
}

}  // namespace

Matrix DenseAdjacency(const kernels::Csr& csr) {
  const int64_t nd = csr.num_dst();
  Matrix a(nd, std::vector<double>(csr.num_src, 0.0));
  const int64_t* ip = csr.indptr.data<int64_t>();
  for (int64_t v = 0; v < nd; ++v) {
    for (int64_t e = ip[v]; e < ip[v + 1]; ++e) {
      a[v][IndexAt(csr.indices, e)] += csr.edge_weight.defined() ? csr.edge_weight.data<float>()[e] : 1.0;
    }
  }
  return a;
}

Matrix GcnAdjacencyRef(const kernels::Csr& csr) {
  Matrix a = DenseAdjacency(csr);  // unweighted counts (no edge weights in tests' blocks)
  const int64_t nd = csr.num_dst(), ns = csr.num_src;
  for (int64_t v = 0; v < nd; ++v) {
    if (a[v][v] == 0.0) a[v][v] = 1.0;
  }
  std::vector<double> deg_in(nd, 0.0), deg_out(ns, 0.0);
  for (int64_t v = 0; v < nd; ++v) {
    for (int64_t u = 0; u < ns; ++u) {
      deg_in[v] += a[v][u];
      deg_out[u] += a[v][u];
    }
  }
  for (int64_t v = 0; v < nd; ++v) {
    for (int64_t u = 0; u < ns; ++u) {
      if (a[v][u] != 0.0) a[v][u] /= std::sqrt(deg_in[v] * deg_out[u]);
    }
  }
  return a;
}

double ProjectionValue(const Tensor& out, const Tensor& r) {
  EXPECT_EQ(out.numel(), r.numel());
  Tensor c = out.Clone();
  double s = 0.0;
  for (int64_t i = 0; i < c.numel(); ++i) s += static_cast<double>(c.data<float>()[i]) * r.data<float>()[i];
  return s;
}

Var ProjectionLoss(Tape& tape, const Var& out, const Tensor& r) {
  Tensor y = Tensor::Empty({1}, DType::kF32);
  y.data<float>()[0] = static_cast<float>(ProjectionValue(out.value(), r));
  return tape.RecordGrad({out}, y, [out, r](const ExecContext& ctx, const Tensor& gy) -> Status {
    const float scale = gy.data<float>()[0];
    Tensor g = Tensor::Empty(r.shape(), DType::kF32);
    for (int64_t i = 0; i < r.numel(); ++i) g.data<float>()[i] = scale * r.data<float>()[i];
    FS_ASSIGN_OR_RETURN(g, g.Reshape(out.shape()));
    return out.AccumulateGrad(ctx, g);
  });
}

std::vector<double> ToDoubles(const Tensor& t) {
  Tensor c = t.Clone();
  std::vector<double> out(c.numel());
  for (int64_t i = 0; i < c.numel(); ++i) out[i] = c.data<float>()[i];
  return out;
}

void CheckGradients(const ForwardFn& forward, const std::vector<Checked>& checked, uint64_t seed,
                    const GradCheckOptions& options) {
  const ExecContext ctx = CpuContext(seed);
  for (const Checked& c : checked) {
    if (c.var.parameter() != nullptr) c.var.parameter()->ZeroGrad();
  }
  Tensor r;
  {
    Tape tape(ctx, options.training);
    ASSERT_OK_AND_ASSIGN(Var out, forward(tape));
    r = RandomTensor(out.shape(), seed + 17);
    Var loss = ProjectionLoss(tape, out, r);
    ASSERT_OK(tape.Backward(loss));
  }
  auto eval = [&]() -> double {
    Tape tape(ctx, options.training, /*record=*/false);
    auto out = forward(tape);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return out.ok() ? ProjectionValue(out->value(), r) : 0.0;
  };
  for (const Checked& c : checked) {
    ASSERT_TRUE(c.var.value().is_contiguous()) << c.name;
    const int64_t n = c.var.value().numel();
    std::vector<double> analytic = c.var.grad().defined() ? ToDoubles(c.var.grad()) : std::vector<double>(n, 0.0);
    float* p = c.var.value().data<float>();
    double total = 0.0;
    int failures = 0;
    for (int64_t j = 0; j < n; ++j) {
      const float orig = p[j];
      const float up = orig + static_cast<float>(options.eps), down = orig - static_cast<float>(options.eps);
      p[j] = up;
      const double f_up = eval();
      p[j] = down;
      const double f_down = eval();
      p[j] = orig;
      const double numeric = (f_up - f_down) / (static_cast<double>(up) - static_cast<double>(down));
      total += std::fabs(numeric);
      const double tol = options.atol + options.rtol * std::fabs(numeric);
      if (std::fabs(analytic[j] - numeric) > tol && ++failures <= 10) {
        ADD_FAILURE() << c.name << "[" << j << "]: analytic " << analytic[j] << " vs numeric " << numeric;
      }
    }
    EXPECT_EQ(failures, 0) << c.name;
    EXPECT_GT(total, 1e-3) << c.name << ": every numeric derivative is ~0, the check would be vacuous";
  }
}

void ExpectNear(const Tensor& actual, const std::vector<double>& expected, double tol, const std::string& what) {
  ASSERT_EQ(actual.numel(), static_cast<int64_t>(expected.size())) << what;
  std::vector<double> a = ToDoubles(actual);
  int failures = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(std::fabs(a[i] - expected[i]) <= tol) && ++failures <= 10) {
      ADD_FAILURE() << what << "[" << i << "]: " << a[i] << " vs expected " << expected[i];
    }
  }
}

void ExpectBitwiseEqual(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_TRUE(a.defined() && b.defined()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  Tensor ca = a.Clone(), cb = b.Clone();
  EXPECT_EQ(std::memcmp(ca.raw_data(), cb.raw_data(), ca.nbytes()), 0) << what << " differs bitwise";
}

Matrix ToMatrix(const Tensor& t) {
  Tensor c = t.Clone();
  Matrix m(c.size(0), std::vector<double>(c.size(1)));
  for (int64_t i = 0; i < c.size(0); ++i) {
    for (int64_t j = 0; j < c.size(1); ++j) m[i][j] = c.data<float>()[i * c.size(1) + j];
  }
  return m;
}

Matrix MatMulRef(const Matrix& a, const Matrix& b) {
  const size_t n = a.size(), k = b.size(), m = b.empty() ? 0 : b[0].size();
  Matrix c(n, std::vector<double>(m, 0.0));
  for (size_t i = 0; i < n; ++i) {
    for (size_t l = 0; l < k; ++l) {
      for (size_t j = 0; j < m; ++j) c[i][j] += a[i][l] * b[l][j];
    }
  }
  return c;
}

std::vector<double> Flatten(const Matrix& m) {
  std::vector<double> out;
  for (const auto& row : m) out.insert(out.end(), row.begin(), row.end());
  return out;
}

}  // namespace foresight::autograd::testing
