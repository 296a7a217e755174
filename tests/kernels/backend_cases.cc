#include "backend_cases.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "foresight/kernels/ops.h"
#include "foresight/kernels/keyed_dropout.h"
#include "kernel_test_util.h"

namespace foresight::kernels::backend {

namespace {

using test::IdsTensor;
using test::RandomF32;

StatusOr<Tensor> Out(const ExecContext& ctx, const Shape& shape, DType dtype = DType::kF32) {
  return Tensor::EmptyOn(ctx.device, shape, dtype);
}

// A host tensor of one value (losses, counts).
Tensor Scalar(double v) {
  Tensor t = Tensor::Empty({1}, DType::kF32);
  t.data<float>()[0] = static_cast<float>(v);
  return t;
}
Tensor Count(int64_t v) {
  Tensor t = Tensor::Empty({1}, DType::kI64);
  t.data<int64_t>()[0] = v;
  return t;
}

Tensor RandomIds(int64_t n, int64_t hi, DType dtype, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<int64_t>(rng() % static_cast<uint64_t>(hi));
  return IdsTensor(v, dtype);
}

Tensor ToDType(const Tensor& f32, DType dtype) {
  if (dtype == DType::kF32) return f32;
  Tensor t = Tensor::Empty(f32.shape(), dtype);
  for (int64_t i = 0; i < f32.numel(); ++i) {
    const float v = f32.data<float>()[i];
    if (dtype == DType::kF16) {
      t.data<Half>()[i].bits = FloatToHalf(v);
    } else {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      t.data<BFloat16>()[i].bits = static_cast<uint16_t>(bits >> 16);
    }
  }
  return t;
}

// A graph for the graph ops: `num_dst` rows with degrees in [0, max_deg]
// (some empty), row 3 with `heavy` edges (several warps of them), sources
// drawn with replacement (repeats), optional weights.
Tensors Graph(int64_t num_dst, int64_t num_src, int64_t max_deg, int64_t heavy, DType idx, bool weighted,
              uint64_t seed) {
  reference::RefCsr g = test::RandomRefCsr(num_dst, num_src, max_deg, seed, weighted);
  if (num_dst > 3 && heavy > 0) {
    std::mt19937_64 rng(seed + 1);
    reference::RefCsr h;
    h.num_src = num_src;
    for (int64_t v = 0; v < num_dst; ++v) {
      const int64_t d = v == 3 ? heavy : g.indptr[v + 1] - g.indptr[v];
      for (int64_t k = 0; k < d; ++k) {
        h.indices.push_back(v == 3 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(num_src))
                                   : g.indices[g.indptr[v] + k]);
        if (weighted) h.weight.push_back(v == 3 ? 0.5 + 0.001 * static_cast<double>(k) : g.weight[g.indptr[v] + k]);
      }
      h.indptr.push_back(h.num_edges());
    }
    g = h;
  }
  Csr c = test::FromRef(g, idx);
  return {c.indptr, c.indices, c.edge_weight};
}

Csr CsrOf(const Tensors& in, size_t at, int64_t num_src) {
  Csr c;
  c.indptr = in[at];
  c.indices = in[at + 1];
  c.edge_weight = in[at + 2];
  c.num_src = num_src;
  return c;
}

int64_t NumEdges(const Tensors& g) { return g[1].size(0); }

Tensors Concat(Tensors a, const Tensors& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---- gemm ----

// cuBLAS sums in its own order (blocked, maybe split over k): for k <= 130
// terms of magnitude <= 1.5 the two sums differ by ~1e-5; a wrong
// transpose or leading dimension errs by O(1).
constexpr Tol kGemm{5e-4, 1e-4};

std::vector<Case> GemmCases() {
  std::vector<Case> cases;
  struct Dims {
    int64_t m, n, k;
  };
  for (const Dims d : {Dims{7, 5, 3}, Dims{64, 33, 130}, Dims{300, 40, 1}, Dims{9, 70, 0}}) {
    for (int t = 0; t < 4; ++t) {
      const bool ta = t & 1, tb = t & 2;
      for (const float beta : {0.0f, 0.5f}) {
        Case c;
        c.name = "Gemm m" + std::to_string(d.m) + " n" + std::to_string(d.n) + " k" + std::to_string(d.k) +
                 (ta ? " ta" : "") + (tb ? " tb" : "") + " beta" + std::to_string(beta);
        c.inputs = {RandomF32(ta ? Shape{d.k, d.m} : Shape{d.m, d.k}, 1 + t),
                    RandomF32(tb ? Shape{d.n, d.k} : Shape{d.k, d.n}, 2 + t), RandomF32({d.m, d.n}, 3 + t)};
        c.run = [ta, tb, beta](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
          FS_RETURN_IF_ERROR(Gemm(ctx, in[0], ta, in[1], tb, 1.5f, beta, &in[2]));
          return Tensors{in[2]};
        };
        c.tol = {kGemm};
        cases.push_back(c);
      }
    }
  }
  {
    // Rows of a and c that are views with a leading stride above their length.
    Case c;
    c.name = "Gemm strided rows";
    c.inputs = {RandomF32({40, 50}, 11), RandomF32({30, 20}, 12), RandomF32({40, 64}, 13)};
    c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      Tensor a = in[0].Slice(1, 5, 35), cv = in[2].Slice(1, 10, 30);
      FS_RETURN_IF_ERROR(Gemm(ctx, a, false, in[1], false, 1.0f, 1.0f, &cv));
      return Tensors{in[2]};
    };
    c.tol = {kGemm};
    cases.push_back(c);
  }
  for (const bool relu : {false, true}) {
    // A Linear layer's forward: the bias (and ReLU) on each tile of the
    // product; 600 columns make two column tiles on the CPU.
    Case c;
    c.name = std::string("GemmBias") + (relu ? " relu" : "");
    c.inputs = {RandomF32({300, 70}, 31), RandomF32({70, 600}, 32), RandomF32({600}, 33)};
    c.run = [relu](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      FS_ASSIGN_OR_RETURN(Tensor y, Out(ctx, {in[0].size(0), in[1].size(1)}));
      FS_RETURN_IF_ERROR(GemmBias(ctx, in[0], in[1], in[2], relu, &y));
      return Tensors{y};
    };
    c.tol = {kGemm};
    cases.push_back(c);
  }
  {
    // The backward through a Linear layer into the ReLU below it: the mask
    // and the bias gradient on each tile of dY W^T; 600 columns of grad_z
    // make two column tiles on the CPU. y is a ReLU output (exact zeros).
    Case c;
    c.name = "GemmReluBackward";
    Tensor y = RandomF32({300, 600}, 36);
    for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] = std::max(y.data<float>()[i], 0.0f);
    c.inputs = {RandomF32({300, 70}, 34), RandomF32({600, 70}, 35), y};
    c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      FS_ASSIGN_OR_RETURN(Tensor gz, Out(ctx, {in[0].size(0), in[1].size(0)}));
      FS_ASSIGN_OR_RETURN(Tensor gb, Out(ctx, {in[1].size(0)}));
      FS_RETURN_IF_ERROR(GemmReluBackward(ctx, in[0], in[1], in[2], &gz, &gb));
      return Tensors{gz, gb};
    };
    // The bias gradient sums 300 rows of products: the GEMM's tolerance
    // grown by the row count's rounding.
    c.tol = {kGemm, Tol{1e-3, 1e-3}};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "Gemm tf32";
    c.inputs = {RandomF32({128, 96}, 21), RandomF32({96, 80}, 22), RandomF32({128, 80}, 23)};
    c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      ExecContext tf = ctx;
      tf.allow_tf32 = true;  // the CPU ignores it
      FS_RETURN_IF_ERROR(Gemm(tf, in[0], false, in[1], false, 1.0f, 0.0f, &in[2]));
      return Tensors{in[2]};
    };
    // 96 products of inputs rounded to 10-bit mantissas: |error| ~ 1e-2.
    c.tol = {Tol{3e-2, 1e-2}};
    cases.push_back(c);
  }
  return cases;
}

// ---- rows ----

std::vector<Case> RowsCases() {
  std::vector<Case> cases;
  for (const DType src_dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (const bool to_f32 : {true, false}) {
      for (const DType idx : {DType::kI32, DType::kI64}) {
        // Rows of 39, 6, 128 and 300 values: the CUDA copy moves 2-, 4-, 8-
        // and 16-byte words, a row in one pass of its lanes or in several.
        for (const Shape& row : {Shape{3, 13}, Shape{6}, Shape{128}, Shape{300}}) {
          Case c;
          c.name = std::string("GatherRows ") + DTypeName(src_dtype) + (to_f32 ? "->f32 " : "->same ") +
                   DTypeName(idx) + " row " + std::to_string(ShapeNumel(row));
          const DType out_dtype = to_f32 ? DType::kF32 : src_dtype;
          Shape src_shape = {300}, out_shape = {777};
          src_shape.insert(src_shape.end(), row.begin(), row.end());
          out_shape.insert(out_shape.end(), row.begin(), row.end());
          c.inputs = {ToDType(RandomF32(src_shape, 31), src_dtype), RandomIds(777, 300, idx, 32)};
          c.run = [out_dtype, out_shape](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
            FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, out_shape, out_dtype));
            FS_RETURN_IF_ERROR(GatherRows(ctx, in[0], in[1], &out));
            return Tensors{out};
          };
          cases.push_back(c);
        }
      }
    }
  }
  {
    Case c;
    c.name = "GatherRows id out of range";
    c.expect_error = true;
    Tensor ids = RandomIds(100, 50, DType::kI64, 33);
    ids.data<int64_t>()[61] = 50;
    ids.data<int64_t>()[80] = -1;
    c.inputs = {RandomF32({50, 4}, 34), ids};
    c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, {100, 4}));
      FS_RETURN_IF_ERROR(GatherRows(ctx, in[0], in[1], &out));
      return Tensors{out};
    };
    cases.push_back(c);
  }
  for (const DType idx : {DType::kI32, DType::kI64}) {
    for (const int64_t rows : {int64_t{7}, int64_t{5000}}) {
      Case c;
      c.name = std::string("IndexAddRows ") + DTypeName(idx) + " into " + std::to_string(rows) + " rows";
      // Many repeats: each destination sums its sources in position order.
      c.inputs = {RandomF32({5000, 2, 9}, 41), RandomIds(5000, rows, idx, 42), RandomF32({rows, 2, 9}, 43)};
      c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
        FS_RETURN_IF_ERROR(IndexAddRows(ctx, in[0], in[1], &in[2]));
        return Tensors{in[2]};
      };
      cases.push_back(c);
    }
  }
  {
    Case c;
    c.name = "IndexAddRows id out of range";
    c.expect_error = true;
    Tensor ids = RandomIds(40, 10, DType::kI32, 44);
    ids.data<int32_t>()[17] = 10;
    c.inputs = {RandomF32({40, 3}, 45), ids, RandomF32({10, 3}, 46)};
    c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      FS_RETURN_IF_ERROR(IndexAddRows(ctx, in[0], in[1], &in[2]));
      return Tensors{in[2]};
    };
    cases.push_back(c);
  }
  return cases;
}

// ---- elementwise ----

std::vector<Case> ElementwiseCases() {
  std::vector<Case> cases;
  for (const int64_t n : {int64_t{1}, int64_t{1000}, int64_t{40001}}) {
    const std::string sz = " n" + std::to_string(n);
    auto binary = [&](const std::string& name, Tol tol,
                      std::function<Status(const ExecContext&, const Tensor&, const Tensor&, Tensor*)> op) {
      Case c;
      c.name = name + sz;
      c.inputs = {RandomF32({n}, 51, -3, 3), RandomF32({n}, 52, -3, 3)};
      c.run = [op](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
        FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, in[0].shape()));
        FS_RETURN_IF_ERROR(op(ctx, in[0], in[1], &out));
        // In place as well (out aliases a).
        FS_RETURN_IF_ERROR(op(ctx, in[0], in[1], &in[0]));
        return Tensors{out, in[0]};
      };
      c.tol = {tol};
      cases.push_back(c);
    };
    binary("Add", kExact, [](const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* o) {
      return Add(ctx, a, b, o);
    });
    binary("Mul", kExact, [](const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* o) {
      return Mul(ctx, a, b, o);
    });
    binary("Axpby", kRounding, [](const ExecContext& ctx, const Tensor& a, const Tensor& b, Tensor* o) {
      return Axpby(ctx, 0.7f, a, -1.3f, b, o);
    });
    binary("Scale", kExact, [](const ExecContext& ctx, const Tensor& a, const Tensor&, Tensor* o) {
      return Scale(ctx, a, -2.5f, o);
    });
  }
  for (const Shape& shape : {Shape{5000, 8}, Shape{3, 40000}, Shape{0, 5}, Shape{33, 1}}) {
    {
      Case c;
      c.name = "AddBias " + ShapeToString(shape);
      c.inputs = {RandomF32(shape, 53), RandomF32({shape[1]}, 54)};
      c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
        FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, in[0].shape()));
        FS_RETURN_IF_ERROR(AddBias(ctx, in[0], in[1], &out));
        return Tensors{out};
      };
      cases.push_back(c);
    }
    {
      // Sums over the CPU's fixed row chunks, combined in chunk order.
      Case c;
      c.name = "SumRows " + ShapeToString(shape);
      c.inputs = {RandomF32(shape, 55)};
      c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
        FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, {in[0].size(1)}));
        FS_RETURN_IF_ERROR(SumRows(ctx, in[0], &out));
        return Tensors{out};
      };
      cases.push_back(c);
    }
  }
  return cases;
}

// ---- dense optimizer updates ----

// Adam with explicit fused multiply-adds and IEEE division / square root:
// the CPU's bits. SGD's CPU loop may be contracted by the compiler, the
// CUDA kernel is not: an ulp of the update. Two parameters per call (one
// crossing the CPU's 32768-element chunk), three steps in a row, so the
// state carries over.
std::vector<Case> OptimizerCases() {
  std::vector<Case> cases;
  const Shape a_shape{40001}, b_shape{33, 7};
  auto params = [&](const Tensors& in, int states) {
    std::vector<DenseUpdateTensors> p(2);
    for (int k = 0; k < 2; ++k) {
      p[k].w = in[k * 4];
      p[k].g = in[k * 4 + 1];
      if (states > 0) p[k].s0 = in[k * 4 + 2];
      if (states > 1) p[k].s1 = in[k * 4 + 3];
    }
    return p;
  };
  auto inputs = [&](uint64_t seed) {
    Tensors in;
    for (const Shape& shape : {a_shape, b_shape}) {
      in.push_back(RandomF32(shape, seed++));
      in.push_back(RandomF32(shape, seed++, -0.1f, 0.1f));
      in.push_back(RandomF32(shape, seed++, -0.05f, 0.05f));
      in.push_back(RandomF32(shape, seed++, 0.0f, 0.01f));  // v >= 0
    }
    return in;
  };
  for (const bool decoupled : {false, true}) {
    Case c;
    c.name = decoupled ? "AdamUpdate adamw" : "AdamUpdate adam";
    c.inputs = inputs(61);
    c.run = [params, decoupled](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      const std::vector<DenseUpdateTensors> p = params(in, 2);
      for (int t = 1; t <= 3; ++t) {
        AdamUpdateArgs a;
        a.step_size = static_cast<float>(0.01 / (1.0 - std::pow(0.9, t)));
        a.bc2_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(0.999, t)));
        a.coupled_wd = decoupled ? 0.0f : 5e-4f;
        a.shrink = decoupled ? std::fma(-0.01f, 0.05f, 1.0f) : 1.0f;
        FS_RETURN_IF_ERROR(AdamUpdate(ctx, a, p));
      }
      return Tensors{in[0], in[2], in[3], in[4], in[6], in[7]};
    };
    cases.push_back(c);
  }
  for (const float momentum : {0.0f, 0.9f}) {
    Case c;
    c.name = momentum > 0 ? "SgdUpdate momentum" : "SgdUpdate";
    c.inputs = inputs(71);
    c.run = [params, momentum](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      const std::vector<DenseUpdateTensors> p = params(in, momentum > 0 ? 1 : 0);
      for (int t = 0; t < 3; ++t) FS_RETURN_IF_ERROR(SgdUpdate(ctx, 0.1f, 5e-4f, momentum, p));
      return Tensors{in[0], in[2], in[4], in[6]};
    };
    c.tol = {kRounding};
    cases.push_back(c);
  }
  {
    // A state tensor on the wrong shape is refused on every device.
    Case c;
    c.name = "AdamUpdate bad state";
    c.inputs = {RandomF32({8}, 81), RandomF32({8}, 82), RandomF32({8}, 83), RandomF32({9}, 84)};
    c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      FS_RETURN_IF_ERROR(AdamUpdate(ctx, AdamUpdateArgs(), {DenseUpdateTensors{in[0], in[1], in[2], in[3]}}));
      return Tensors{in[0]};
    };
    c.expect_error = true;
    cases.push_back(c);
  }
  return cases;
}

// ---- activations and dropout ----

std::vector<Case> ActivationCases() {
  std::vector<Case> cases;
  struct A {
    Activation act;
    float param;
    const char* name;
    Tol tol;
  };
  for (const A a : {A{Activation::kRelu, 0.0f, "relu", kExact}, A{Activation::kLeakyRelu, 0.2f, "leaky_relu", kExact},
                    A{Activation::kElu, 1.0f, "elu", kMath}}) {
    Case c;
    c.name = std::string("Activate + backward ") + a.name;
    Tensor x = RandomF32({10007}, 61, -3, 3);
    for (int64_t i = 0; i < 10007; i += 97) x.data<float>()[i] = 0.0f;  // the kink itself
    c.inputs = {x, RandomF32({10007}, 62)};
    c.run = [a](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, in[0].shape()));
      FS_ASSIGN_OR_RETURN(Tensor gx, Out(ctx, in[0].shape()));
      FS_RETURN_IF_ERROR(Activate(ctx, a.act, a.param, in[0], &out));
      FS_RETURN_IF_ERROR(ActivateBackward(ctx, a.act, a.param, in[0], in[1], &gx));
      return Tensors{out, gx};
    };
    c.tol = {a.tol};
    cases.push_back(c);
  }
  {
    // A Linear layer's bias + ReLU and their backward (the bias gradient in
    // SumRows' chunk order), each one pass on the CPU.
    Case c;
    c.name = "AddBiasRelu + ReluBackwardSumRows";
    Tensor x = RandomF32({3001, 37}, 63, -3, 3);
    for (int64_t i = 0; i < x.numel(); i += 97) x.data<float>()[i] = 0.0f;
    c.inputs = {x, RandomF32({37}, 64), RandomF32({3001, 37}, 65)};
    c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      FS_ASSIGN_OR_RETURN(Tensor y, Out(ctx, in[0].shape()));
      FS_ASSIGN_OR_RETURN(Tensor gz, Out(ctx, in[0].shape()));
      FS_ASSIGN_OR_RETURN(Tensor gb, Out(ctx, {in[0].size(1)}));
      FS_RETURN_IF_ERROR(AddBiasRelu(ctx, in[0], in[1], &y));
      FS_RETURN_IF_ERROR(ReluBackwardSumRows(ctx, y, in[2], &gz, &gb));
      return Tensors{y, gz, gb};
    };
    c.tol = {kExact};
    cases.push_back(c);
  }
  return cases;
}

std::vector<Case> DropoutCases() {
  std::vector<Case> cases;
  for (const float p : {0.0f, 0.1f, 0.5f, 0.9f}) {
    for (const int64_t n : {int64_t{1}, int64_t{5}, int64_t{1001}, int64_t{40003}}) {
      Case c;
      c.name = "Dropout + backward p" + std::to_string(p) + " n" + std::to_string(n);
      c.inputs = {RandomF32({n}, 71), RandomF32({n}, 72)};
      c.run = [p](const ExecContext& ctx0, Tensors& in) -> StatusOr<Tensors> {
        const ExecContext ctx = ctx0.WithRng(RngKey::FromSeed(99).Fold(static_cast<uint64_t>(p * 100)));
        const int64_t n = in[0].numel();
        FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, {n}));
        FS_ASSIGN_OR_RETURN(Tensor mask, Out(ctx, {n}, DType::kU8));
        FS_ASSIGN_OR_RETURN(Tensor out2, Out(ctx, {n}));
        FS_ASSIGN_OR_RETURN(Tensor gx, Out(ctx, {n}));
        FS_RETURN_IF_ERROR(Dropout(ctx, p, in[0], &out, &mask));
        FS_RETURN_IF_ERROR(Dropout(ctx, p, in[0], &out2, nullptr));  // no mask: the same outputs
        FS_RETURN_IF_ERROR(DropoutBackward(ctx, p, mask, in[1], &gx));
        return Tensors{out, mask, out2, gx};
      };
      cases.push_back(c);
    }
  }
  // Keyed by row (ids in any order, far apart, repeated) and by edge.
  for (const int64_t cols : {int64_t{1}, int64_t{37}, int64_t{256}}) {
    Case c;
    c.name = "DropoutRows + backward cols" + std::to_string(cols);
    const int64_t rows = 301;
    Tensor ids = Tensor::Empty({rows}, DType::kI64);
    for (int64_t r = 0; r < rows; ++r) {
      ids.data<int64_t>()[r] = (r * 7919 + 13) % 100003 + (r % 5 == 0 ? 1000000007 : 0);
    }
    c.inputs = {RandomF32({rows, cols}, 73), RandomF32({rows, cols}, 74), ids};
    c.run = [](const ExecContext& ctx0, Tensors& in) -> StatusOr<Tensors> {
      const ExecContext ctx = ctx0.WithRng(RngKey::FromSeed(98));
      FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, in[0].shape()));
      FS_ASSIGN_OR_RETURN(Tensor mask, Out(ctx, {in[0].numel()}, DType::kU8));
      FS_ASSIGN_OR_RETURN(Tensor gx, Out(ctx, in[0].shape()));
      FS_RETURN_IF_ERROR(DropoutRows(ctx, 0.4f, in[0], in[2], &out, &mask));
      FS_RETURN_IF_ERROR(DropoutBackward(ctx, 0.4f, mask, in[1], &gx));
      return Tensors{out, mask, gx};
    };
    cases.push_back(c);
  }
  {
    // ReLU and the dropout in one pass (x has both signs), its mask's
    // backward.
    Case c;
    c.name = "ReluDropoutRows + backward";
    const int64_t rows = 301, cols = 37;
    Tensor ids = Tensor::Empty({rows}, DType::kI64);
    for (int64_t r = 0; r < rows; ++r) ids.data<int64_t>()[r] = (r * 7919 + 13) % 100003;
    c.inputs = {RandomF32({rows, cols}, 77), RandomF32({rows, cols}, 78), ids};
    c.run = [](const ExecContext& ctx0, Tensors& in) -> StatusOr<Tensors> {
      const ExecContext ctx = ctx0.WithRng(RngKey::FromSeed(99));
      FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, in[0].shape()));
      FS_ASSIGN_OR_RETURN(Tensor mask, Out(ctx, {in[0].numel()}, DType::kU8));
      FS_ASSIGN_OR_RETURN(Tensor gx, Out(ctx, in[0].shape()));
      FS_RETURN_IF_ERROR(ReluDropoutRows(ctx, 0.4f, in[0], in[2], &out, &mask));
      FS_RETURN_IF_ERROR(DropoutBackward(ctx, 0.4f, mask, in[1], &gx));
      return Tensors{out, mask, gx};
    };
    cases.push_back(c);
  }
  for (const DType idx : {DType::kI32, DType::kI64}) {
    const int64_t num_dst = 90, num_src = 200;
    Case c;
    c.name = std::string("DropoutEdgeKeys ") + DTypeName(idx);
    Tensor ids = Tensor::Empty({num_src}, DType::kI64);
    for (int64_t v = 0; v < num_src; ++v) ids.data<int64_t>()[v] = v * 104729 + 3;
    c.inputs = Concat(Graph(num_dst, num_src, 8, 75, idx, false, 76), {ids});
    c.run = [=](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      Tensor keys;
      FS_RETURN_IF_ERROR(DropoutEdgeKeys(ctx, CsrOf(in, 0, num_src), in[3], &keys));
      return Tensors{keys};
    };
    cases.push_back(c);
  }
  return cases;
}

// ---- losses and metrics ----

std::vector<Case> LossCases() {
  std::vector<Case> cases;
  for (const Shape& shape : {Shape{300, 7}, Shape{5, 100}, Shape{3000, 3}}) {
    Case c;
    c.name = "LogSoftmax + backward " + ShapeToString(shape);
    c.inputs = {RandomF32(shape, 81, -6, 6), RandomF32(shape, 82)};
    c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, in[0].shape()));
      FS_ASSIGN_OR_RETURN(Tensor g, Out(ctx, in[0].shape()));
      FS_RETURN_IF_ERROR(LogSoftmax(ctx, in[0], &out));
      FS_RETURN_IF_ERROR(LogSoftmaxBackward(ctx, out, in[1], &g));
      return Tensors{out, g};
    };
    c.tol = {kMath};
    cases.push_back(c);
  }
  for (const DType ld : {DType::kI32, DType::kI64}) {
    for (const int64_t n : {int64_t{1}, int64_t{300}, int64_t{3000}}) {
      const int64_t classes = 5;
      std::mt19937_64 rng(83 + n);
      std::vector<int64_t> labels(static_cast<size_t>(n));
      for (auto& y : labels) y = static_cast<int64_t>(rng() % (classes + 1)) - 1;  // some -1: unlabelled
      // Scores on a coarse grid: ties, where the first maximum wins.
      Tensor scores = RandomF32({n, classes}, 84);
      for (int64_t i = 0; i < scores.numel(); ++i) scores.data<float>()[i] = std::round(scores.data<float>()[i] * 2);
      Case c;
      c.name = std::string("NllLoss + Accuracy labels ") + DTypeName(ld) + " n" + std::to_string(n);
      c.inputs = {RandomF32({n, classes}, 85, -5, 0), IdsTensor(labels, ld), scores};
      c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
        float loss = 0, loss_no_grad = 0;
        FS_ASSIGN_OR_RETURN(Tensor g, Out(ctx, in[0].shape()));
        FS_RETURN_IF_ERROR(NllLoss(ctx, in[0], in[1], &loss, &g));
        FS_RETURN_IF_ERROR(NllLoss(ctx, in[0], in[1], &loss_no_grad, nullptr));
        int64_t correct = 0, counted = 0;
        FS_RETURN_IF_ERROR(Accuracy(ctx, in[2], in[1], &correct, &counted));
        return Tensors{Scalar(loss), g, Scalar(loss_no_grad), Count(correct), Count(counted)};
      };
      cases.push_back(c);
    }
  }
  for (const bool nll : {true, false}) {
    Case c;
    c.name = nll ? "NllLoss label out of range" : "Accuracy label out of range";
    c.expect_error = true;
    std::vector<int64_t> labels(50, 1);
    labels[17] = 4;
    labels[30] = 9;
    c.inputs = {RandomF32({50, 4}, 86, -5, 0), IdsTensor(labels, DType::kI64)};
    c.run = [nll](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      if (nll) {
        float loss = 0;
        FS_RETURN_IF_ERROR(NllLoss(ctx, in[0], in[1], &loss, nullptr));
        return Tensors{Scalar(loss)};
      }
      int64_t correct = 0, counted = 0;
      FS_RETURN_IF_ERROR(Accuracy(ctx, in[0], in[1], &correct, &counted));
      return Tensors{Count(correct)};
    };
    cases.push_back(c);
  }
  return cases;
}

// ---- Csr ----

std::vector<Case> CsrCases() {
  std::vector<Case> cases;
  for (const DType idx : {DType::kI32, DType::kI64}) {
    for (const bool weighted : {false, true}) {
      Case c;
      c.name = std::string("TransposeCsr ") + DTypeName(idx) + (weighted ? " weighted" : "");
      c.inputs = Graph(200, 350, 12, 300, idx, weighted, 91);
      c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
        Csr t;
        Tensor perm;
        FS_RETURN_IF_ERROR(TransposeCsr(ctx, CsrOf(in, 0, 350), &t, &perm));
        FS_RETURN_IF_ERROR(ValidateCsr(t, "transposed"));
        return Tensors{t.indptr, t.indices, perm, t.edge_weight, Count(t.num_src)};
      };
      cases.push_back(c);
    }
  }
  // ValidateCsr's messages for each kind of bad value.
  for (int bad = 0; bad < 4; ++bad) {
    Case c;
    c.name = "ValidateCsr bad " + std::to_string(bad);
    c.expect_error = true;
    Tensors g = Graph(50, 60, 6, 0, DType::kI32, false, 92);
    int64_t* ip = g[0].data<int64_t>();
    const int64_t ne = NumEdges(g);
    if (bad == 0) ip[0] = 1;
    if (bad == 1) std::swap(ip[20], ip[30]);
    if (bad == 2) ip[50] = ne + 3;
    if (bad == 3 && ne > 40) g[1].data<int32_t>()[40] = 60;
    c.inputs = g;
    c.run = [](const ExecContext&, Tensors& in) -> StatusOr<Tensors> {
      FS_RETURN_IF_ERROR(ValidateCsr(CsrOf(in, 0, 60), "g"));
      return Tensors{};
    };
    cases.push_back(c);
  }
  return cases;
}

// ---- SpMM ----

std::vector<Case> SpmmCases() {
  std::vector<Case> cases;
  struct R {
    Reduce reduce;
    bool weighted;
    Tol fwd, bwd;
  };
  for (const R r : {R{Reduce::kSum, false, kExact, kExact}, R{Reduce::kSum, true, kRounding, kRounding},
                    R{Reduce::kMean, false, kExact, kRounding}, R{Reduce::kMax, false, kExact, kExact}}) {
    for (const DType idx : {DType::kI32, DType::kI64}) {
      for (const int64_t f : {int64_t{1}, int64_t{40}, int64_t{70}}) {
        const int64_t num_dst = 200, num_src = 350;
        Case c;
        c.name = std::string("Spmm + backward ") + ReduceName(r.reduce) + (r.weighted ? " weighted " : " ") +
                 DTypeName(idx) + " f" + std::to_string(f);
        c.inputs = Concat(Graph(num_dst, num_src, 12, 300, idx, r.weighted, 100 + f),
                          {RandomF32({num_src, f}, 101), RandomF32({num_dst, f}, 102)});
        // Max: coarse values, so ties (the first maximum wins) are common.
        if (r.reduce == Reduce::kMax) {
          for (int64_t i = 0; i < c.inputs[3].numel(); ++i) {
            c.inputs[3].data<float>()[i] = std::round(c.inputs[3].data<float>()[i] * 3);
          }
        }
        const Reduce reduce = r.reduce;
        c.run = [reduce, num_dst, num_src, f](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
          const Csr csr = CsrOf(in, 0, num_src);
          FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, {num_dst, f}));
          Tensor argmax;
          if (reduce == Reduce::kMax) {
            FS_ASSIGN_OR_RETURN(argmax, Out(ctx, {num_dst, f}, DType::kI64));
          }
          FS_RETURN_IF_ERROR(Spmm(ctx, csr, reduce, in[3], &out, reduce == Reduce::kMax ? &argmax : nullptr));
          Csr csr_t;
          Tensor perm;
          FS_RETURN_IF_ERROR(TransposeCsr(ctx, csr, &csr_t, &perm));
          FS_ASSIGN_OR_RETURN(Tensor gx, Out(ctx, {num_src, f}));
          FS_RETURN_IF_ERROR(SpmmBackward(ctx, csr, csr_t, perm, reduce, in[4], argmax, &gx));
          return Tensors{out, argmax, gx};
        };
        c.tol = {r.fwd, kExact, r.bwd};
        cases.push_back(c);
      }
    }
  }
  {
    // Max without argmax: the same output.
    Case c;
    c.name = "Spmm max without argmax";
    c.inputs = Concat(Graph(64, 80, 40, 0, DType::kI64, false, 103), {RandomF32({80, 33}, 104)});
    c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, {64, 33}));
      FS_RETURN_IF_ERROR(Spmm(ctx, CsrOf(in, 0, 80), Reduce::kMax, in[3], &out, nullptr));
      return Tensors{out};
    };
    cases.push_back(c);
  }
  return cases;
}

// ---- GCN normalisation ----

std::vector<Case> GcnCases() {
  std::vector<Case> cases;
  for (const DType idx : {DType::kI32, DType::kI64}) {
    for (const int64_t num_src : {int64_t{150}, int64_t{400}}) {
      Case c;
      c.name = std::string("GcnNormalize + GcnOutDegrees ") + DTypeName(idx) + " src" + std::to_string(num_src);
      Tensors g = Graph(150, num_src, 8, 200, idx, true, 110 + num_src);
      // Some rows already hold their self loop (it stays where it is).
      for (int64_t v = 0; v < 150; v += 3) {
        const int64_t* ip = g[0].data<int64_t>();
        if (ip[v + 1] > ip[v]) {
          if (idx == DType::kI32) {
            g[1].data<int32_t>()[ip[v]] = static_cast<int32_t>(v);
          } else {
            g[1].data<int64_t>()[ip[v]] = v;
          }
        }
      }
      c.inputs = g;
      c.run = [num_src](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
        const Csr csr = CsrOf(in, 0, num_src);
        Csr norm;
        FS_RETURN_IF_ERROR(GcnNormalize(ctx, csr, &norm));
        Tensor deg;
        FS_RETURN_IF_ERROR(GcnOutDegrees(ctx, csr, &deg));
        Csr given;
        FS_RETURN_IF_ERROR(GcnNormalizeWithOutDegrees(ctx, csr, deg, &given));
        return Tensors{norm.indptr, norm.indices, norm.edge_weight, deg, given.edge_weight};
      };
      cases.push_back(c);
    }
  }
  {
    Case c;
    c.name = "GcnNormalizeWithOutDegrees degree below 1";
    c.expect_error = true;
    Tensors g = Graph(40, 60, 5, 0, DType::kI64, false, 111);
    Tensor deg = Tensor::Empty({60}, DType::kI64);
    for (int64_t i = 0; i < 60; ++i) deg.data<int64_t>()[i] = 2;
    deg.data<int64_t>()[g[1].data<int64_t>()[NumEdges(g) / 2]] = 0;
    c.inputs = Concat(g, {deg});
    c.run = [](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      Csr out;
      FS_RETURN_IF_ERROR(GcnNormalizeWithOutDegrees(ctx, CsrOf(in, 0, 60), in[3], &out));
      return Tensors{out.edge_weight};
    };
    cases.push_back(c);
  }
  return cases;
}

// ---- GAT ----

std::vector<Case> GatCases() {
  std::vector<Case> cases;
  for (const DType idx : {DType::kI32, DType::kI64}) {
    for (const bool skip_some : {false, true}) {
      const int64_t num_dst = 120, num_src = 260, h = 3, d = 5;
      Case c;
      c.name = std::string("GAT forward + backward ") + DTypeName(idx) + (skip_some ? " (null grads)" : "");
      Tensors g = Graph(num_dst, num_src, 10, 150, idx, false, 120);
      const int64_t ne = NumEdges(g);
      c.inputs = Concat(g, {RandomF32({num_src, h}, 121), RandomF32({num_dst, h}, 122), RandomF32({num_src, h, d}, 123),
                            RandomF32({num_dst, h, d}, 124), RandomF32({ne, h}, 125)});
      c.run = [=](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
        const Csr csr = CsrOf(in, 0, num_src);
        const Tensor &el = in[3], &er = in[4], &x = in[5], &gout = in[6], &gscore = in[7];
        Csr csr_t;
        Tensor perm;
        FS_RETURN_IF_ERROR(TransposeCsr(ctx, csr, &csr_t, &perm));
        FS_ASSIGN_OR_RETURN(Tensor scores, Out(ctx, {ne, h}));
        FS_RETURN_IF_ERROR(GatEdgeScores(ctx, csr, el, er, 0.2f, &scores));
        FS_ASSIGN_OR_RETURN(Tensor alpha, Out(ctx, {ne, h}));
        FS_RETURN_IF_ERROR(EdgeSoftmax(ctx, csr, scores, &alpha));
        FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, {num_dst, h, d}));
        FS_RETURN_IF_ERROR(SpmmEdgeHeads(ctx, csr, alpha, x, &out));
        FS_ASSIGN_OR_RETURN(Tensor galpha, Out(ctx, {ne, h}));
        FS_ASSIGN_OR_RETURN(Tensor gx, Out(ctx, {num_src, h, d}));
        FS_RETURN_IF_ERROR(SpmmEdgeHeadsBackward(ctx, csr, csr_t, perm, alpha, x, gout, &galpha,
                                                 skip_some ? nullptr : &gx));
        FS_ASSIGN_OR_RETURN(Tensor gs, Out(ctx, {ne, h}));
        FS_RETURN_IF_ERROR(EdgeSoftmaxBackward(ctx, csr, alpha, gscore, &gs));
        FS_ASSIGN_OR_RETURN(Tensor gel, Out(ctx, {num_src, h}));
        FS_ASSIGN_OR_RETURN(Tensor ger, Out(ctx, {num_dst, h}));
        FS_RETURN_IF_ERROR(GatEdgeScoresBackward(ctx, csr, csr_t, perm, el, er, 0.2f, gscore,
                                                 skip_some ? nullptr : &gel, &ger));
        return Tensors{scores, alpha, out, galpha, skip_some ? Tensor() : gx, gs, skip_some ? Tensor() : gel, ger};
      };
      // scores: the CPU's bits; alpha and what follows it carry exp's rounding.
      c.tol = {kExact, kMath, kMath, kMath, kMath, kMath, kRounding, kRounding};
      cases.push_back(c);
    }
  }
  return cases;
}

// ---- neighbour sampling ----

std::vector<Case> SampleCases() {
  std::vector<Case> cases;
  for (const DType idx : {DType::kI32, DType::kI64}) {
    for (const int mask_kind : {0, 1, 2}) {  // none, all ones, random 70%
      for (const int64_t fanout : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{10}, int64_t{25}, int64_t{100},
                                   int64_t{-1}}) {
        const int64_t num_nodes = 500;
        Case c;
        c.name = std::string("SampleNeighbors ") + DTypeName(idx) + " mask" + std::to_string(mask_kind) +
                 " fanout" + std::to_string(fanout);
        Tensors g = Graph(num_nodes, num_nodes, 60, 400, idx, false, 130);
        g[2] = Tensor();
        // Seeds: every node once, then repeats (a repeated seed repeats its sample).
        std::vector<int64_t> seeds;
        for (int64_t v = 0; v < num_nodes; ++v) seeds.push_back((v * 7) % num_nodes);
        for (int64_t v = 0; v < 50; ++v) seeds.push_back(3 + (v % 4));
        Tensor mask = Tensor::Empty({num_nodes}, DType::kU8);
        std::mt19937_64 rng(131);
        for (int64_t v = 0; v < num_nodes; ++v) mask.data<uint8_t>()[v] = mask_kind == 1 || rng() % 10 < 7 ? 1 : 0;
        c.inputs = Concat(g, {IdsTensor(seeds, fanout == 3 ? DType::kI32 : DType::kI64), mask});
        c.run = [=](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
          Tensor indptr, nbrs;
          const RngKey key = RngKey::FromSeed(5).Fold(static_cast<uint64_t>(fanout + 7));
          FS_RETURN_IF_ERROR(SampleNeighbors(ctx, CsrOf(in, 0, num_nodes), in[3], fanout, key, &indptr, &nbrs,
                                             mask_kind == 0 ? nullptr : &in[4]));
          return Tensors{indptr, nbrs};
        };
        cases.push_back(c);
      }
    }
  }
  for (const bool masked : {false, true}) {
    Case c;
    c.name = std::string("SampleNeighbors bad seed") + (masked ? " and bad index (masked)" : "");
    c.expect_error = true;
    Tensors g = Graph(40, 40, 5, 0, DType::kI64, false, 132);
    g[2] = Tensor();
    std::vector<int64_t> seeds = {1, 2, 3, 4, 5, 6, 7};
    if (masked) {
      // Seed 5's row reads a source outside [0, 40): flagged with a mask only.
      const int64_t* ip = g[0].data<int64_t>();
      int64_t v = 0;
      while (ip[v + 1] == ip[v]) ++v;
      g[1].data<int64_t>()[ip[v]] = 41;
      seeds = {v, v + 1};
    } else {
      seeds[4] = 40;
      seeds[6] = -2;
    }
    Tensor mask = Tensor::Empty({40}, DType::kU8);
    for (int64_t i = 0; i < 40; ++i) mask.data<uint8_t>()[i] = 1;
    c.inputs = Concat(g, {IdsTensor(seeds, DType::kI64), mask});
    c.run = [masked](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
      Tensor indptr, nbrs;
      FS_RETURN_IF_ERROR(SampleNeighbors(ctx, CsrOf(in, 0, 40), in[3], 3, RngKey::FromSeed(1), &indptr, &nbrs,
                                         masked ? &in[4] : nullptr));
      return Tensors{indptr, nbrs};
    };
    cases.push_back(c);
  }
  return cases;
}

// ---- embedding bags ----

std::vector<Case> EmbeddingBagCases() {
  std::vector<Case> cases;
  for (const Pooling pooling : {Pooling::kSum, Pooling::kMean}) {
    for (const SparseOptimizer opt :
         {SparseOptimizer::kSgd, SparseOptimizer::kRowwiseAdagrad, SparseOptimizer::kAdam}) {
      const int64_t batch = 70, tables = 3, dim = 40, rows_per_table = 30;
      EmbeddingRowLayout layout;
      layout.dim = dim;
      layout.optimizer = opt;
      Case c;
      c.name = std::string("EmbeddingBag forward + update ") + PoolingName(pooling) + " " + SparseOptimizerName(opt);
      std::mt19937_64 rng(140);
      std::vector<int64_t> offsets = {0}, ids, table_offsets;
      for (int64_t t = 0; t <= tables; ++t) table_offsets.push_back(t * rows_per_table);
      for (int64_t q = 0; q < batch * tables; ++q) {
        const int64_t len = static_cast<int64_t>(rng() % 5);  // some empty bags
        for (int64_t k = 0; k < len; ++k) ids.push_back(static_cast<int64_t>(rng() % rows_per_table));
        offsets.push_back(static_cast<int64_t>(ids.size()));
      }
      Tensor weights = RandomF32({tables * rows_per_table, layout.row_width()}, 141, 0.1f, 1.0f);
      c.inputs = {weights, IdsTensor(table_offsets, DType::kI64), IdsTensor(ids, DType::kI32),
                  IdsTensor(offsets, DType::kI64), RandomF32({batch, tables * dim}, 142)};
      c.run = [=](const ExecContext& ctx, Tensors& in) -> StatusOr<Tensors> {
        FS_ASSIGN_OR_RETURN(Tensor out, Out(ctx, {batch, tables * dim}));
        FS_RETURN_IF_ERROR(EmbeddingBagForward(ctx, layout, in[0], in[1], in[2], in[3], Tensor(), pooling, &out));
        SparseOptimizerConfig cfg;
        cfg.kind = opt;
        cfg.lr = 0.05f;
        FS_RETURN_IF_ERROR(
            EmbeddingBagBackwardUpdate(ctx, layout, cfg, in[1], in[2], in[3], Tensor(), pooling, in[4], &in[0]));
        return Tensors{out, in[0]};
      };
      cases.push_back(c);
    }
  }
  return cases;
}

}  // namespace

std::vector<std::string> GroupNames() {
  return {"gemm", "rows", "elementwise", "activation", "dropout", "loss",
          "csr",  "spmm", "gcn",         "gat",        "sample",  "embedding_bag", "optimizer"};
}

std::vector<Case> MakeGroup(const std::string& group) {
  if (group == "gemm") return GemmCases();
  if (group == "rows") return RowsCases();
  if (group == "elementwise") return ElementwiseCases();
  if (group == "activation") return ActivationCases();
  if (group == "dropout") return DropoutCases();
  if (group == "loss") return LossCases();
  if (group == "csr") return CsrCases();
  if (group == "spmm") return SpmmCases();
  if (group == "gcn") return GcnCases();
  if (group == "gat") return GatCases();
  if (group == "sample") return SampleCases();
  if (group == "embedding_bag") return EmbeddingBagCases();
  if (group == "optimizer") return OptimizerCases();
  return {};
}

}  // namespace foresight::kernels::backend
