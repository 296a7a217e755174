// Layers: parameter names and init, forward against naive double
// references, and finite-difference gradients w.r.t. the input and every
// parameter on small random blocks (empty rows, self loops present/absent).
#include "foresight/autograd/layers.h"

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

#include "grad_check.h"

namespace foresight::autograd {
namespace {

using testing::Checked;
using testing::CheckGradients;
using testing::Matrix;
using testing::RandomTensor;
using testing::SelfLoops;

std::map<std::string, Parameter*> ByName(const Module& m) {
  std::map<std::string, Parameter*> out;
  for (Parameter* p : m.Parameters()) out[p->name()] = p;
  return out;
}

std::vector<std::string> Names(const Module& m) {
  std::vector<std::string> out;
  for (Parameter* p : m.Parameters()) out.push_back(p->name());
  return out;
}

// Biases start at zero; give them values so the checks see them.
void RandomizeBiases(const Module& m, uint64_t seed) {
  for (Parameter* p : m.Parameters()) {
    if (p->name().size() >= 4 && p->name().compare(p->name().size() - 4, 4, "bias") == 0) {
      ASSERT_OK(p->mutable_value().CopyFrom(RandomTensor(p->value().shape(), seed++)));
    }
  }
}

std::vector<Checked> InputAndParams(const Var& x, const Module& m) {
  std::vector<Checked> out{{"x", x}};
  for (Parameter* p : m.Parameters()) out.push_back({p->name(), p->var()});
  return out;
}

Matrix AddRowVector(Matrix m, const Tensor& bias) {
  for (auto& row : m) {
    for (size_t j = 0; j < row.size(); ++j) row[j] += bias.data<float>()[j];
  }
  return m;
}

TEST(GlorotTest, BoundsAndCounterBasedValues) {
  const RngKey key = RngKey::FromSeed(7);
  Tensor a = GlorotUniform({40, 60}, 40, 60, key);
  const double bound = std::sqrt(6.0 / 100.0);
  double sum = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const float v = a.data<float>()[i];
    ASSERT_LE(std::fabs(v), bound);
    sum += v;
  }
  EXPECT_LT(std::fabs(sum / a.numel()), 0.02);
  // Value i depends only on (key, i): a smaller tensor is a prefix.
  Tensor b = GlorotUniform({10}, 40, 60, key);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(a.data<float>()[i], b.data<float>()[i]);
  Tensor c = GlorotUniform({10}, 40, 60, key.Fold(1));
  EXPECT_NE(std::memcmp(b.raw_data(), c.raw_data(), b.nbytes()), 0);
}

TEST(LinearTest, NamesForwardAndGradients) {
  Linear with_bias("fc", 4, 3, true, RngKey::FromSeed(1));
  EXPECT_EQ(Names(with_bias), (std::vector<std::string>{"fc.weight", "fc.bias"}));
  RandomizeBiases(with_bias, 100);
  Var x(RandomTensor({5, 4}, 2), true);
  {
    Tape tape(CpuContext(), false);
    ASSERT_OK_AND_ASSIGN(Var y, with_bias.Forward(tape, x));
    Matrix ref = AddRowVector(
        testing::MatMulRef(testing::ToMatrix(x.value()), testing::ToMatrix(with_bias.weight()->value())),
        with_bias.bias()->value());
    testing::ExpectNear(y.value(), testing::Flatten(ref), 1e-5, "Linear");
  }
  CheckGradients([&](Tape& t) { return with_bias.Forward(t, x); }, InputAndParams(x, with_bias), 3);

  Linear no_bias("fc2", 4, 2, false, RngKey::FromSeed(4));
  EXPECT_EQ(Names(no_bias), (std::vector<std::string>{"fc2.weight"}));
  EXPECT_EQ(no_bias.bias(), nullptr);
  Var x2(RandomTensor({3, 4}, 5), true);
  CheckGradients([&](Tape& t) { return no_bias.Forward(t, x2); }, InputAndParams(x2, no_bias), 6);

  Tape tape(CpuContext(), false);
  EXPECT_ERROR_CONTAINS(with_bias.Forward(tape, Var(RandomTensor({5, 3}, 7))), "fc", "[5, 3]", "[4, 3]");
}

struct BlockCase {
  const char* name;
  int64_t num_dst, num_src, in, out;
  SelfLoops loops;
  bool i32 = false;  // index dtype of the block
};
void PrintTo(const BlockCase& c, std::ostream* os) { *os << c.name; }

// in < out and in > out exercise both orders of transform and aggregation.
const BlockCase kBlockCases[] = {
    {"block_no_loops_widen", 5, 8, 3, 4, SelfLoops::kNone},
    {"block_all_loops_narrow", 5, 8, 6, 2, SelfLoops::kAll},
    {"full_some_loops_narrow", 7, 7, 5, 3, SelfLoops::kSome},
    {"full_no_loops_widen", 7, 7, 2, 5, SelfLoops::kNone},
    {"block_some_loops_i32", 6, 9, 4, 3, SelfLoops::kSome, true},
};

class LayerTest : public ::testing::TestWithParam<BlockCase> {};

TEST_P(LayerTest, SAGEConv) {
  const BlockCase& c = GetParam();
  kernels::Csr csr = testing::RandomBlock(c.num_dst, c.num_src, 3, c.loops, 11, c.i32);
  GraphBlock block(csr);
  SAGEConv layer("sage", c.in, c.out, RngKey::FromSeed(12));
  EXPECT_EQ(Names(layer), (std::vector<std::string>{"sage.self.weight", "sage.self.bias", "sage.neigh.weight"}));
  RandomizeBiases(layer, 200);
  Var x(RandomTensor({c.num_src, c.in}, 13), true);
  {
    auto p = ByName(layer);
    Matrix xm = testing::ToMatrix(x.value());
    Matrix x_dst(xm.begin(), xm.begin() + c.num_dst);
    Matrix a = testing::DenseAdjacency(csr);
    for (auto& row : a) {
      double deg = 0;
      for (double w : row) deg += w;
      for (double& w : row) w = deg > 0 ? w / deg : 0.0;
    }
    Matrix self = testing::MatMulRef(x_dst, testing::ToMatrix(p["sage.self.weight"]->value()));
    Matrix neigh = testing::MatMulRef(testing::MatMulRef(a, xm), testing::ToMatrix(p["sage.neigh.weight"]->value()));
    for (int64_t v = 0; v < c.num_dst; ++v) {
      for (int64_t j = 0; j < c.out; ++j) self[v][j] += neigh[v][j];
    }
    Tape tape(CpuContext(), false);
    ASSERT_OK_AND_ASSIGN(Var y, layer.Forward(tape, block, x));
    testing::ExpectNear(y.value(), testing::Flatten(AddRowVector(self, p["sage.self.bias"]->value())), 1e-5,
                        "SAGEConv");
  }
  CheckGradients([&](Tape& t) { return layer.Forward(t, block, x); }, InputAndParams(x, layer), 14);
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

// SAGEConv's aggregate-first form records its two products as one node
// (LinearPairOp): its output and every gradient are the bits of the
// separate ops it replaced, Add(AddBias(MatMul(x_dst, W_self), b),
// MatMul(mean(x), W_neigh)). Sizes large enough for several GEMM tiles and
// SIMD tails; in < out picks aggregate-first. Widths 24 and 128 take the
// neighbour product accumulated into the output (GEMM beta = 1), 200 the
// temporary and Add (linear_pair.cc: OpenBLAS may split a k above 128).
class SAGEConvPairTest : public ::testing::TestWithParam<std::pair<int64_t, int64_t>> {};

TEST_P(SAGEConvPairTest, OneNodeForBothProductsGivesTheSeparateOpsBits) {
  const int64_t num_dst = 300, num_src = 700, in = GetParam().first, out = GetParam().second;
  kernels::Csr csr = testing::RandomBlock(num_dst, num_src, 6, SelfLoops::kSome, 41, false);
  GraphBlock block(csr);
  SAGEConv layer("sage", in, out, RngKey::FromSeed(42));
  RandomizeBiases(layer, 400);
  auto p = ByName(layer);
  const Var ws = p["sage.self.weight"]->var(), b = p["sage.self.bias"]->var(), wn = p["sage.neigh.weight"]->var();
  const Tensor x_value = RandomTensor({num_src, in}, 43);
  const Tensor gy = RandomTensor({num_dst, out}, 44);
  struct Result {
    Tensor y, gx, gws, gb, gwn;
  };
  auto run = [&](bool fused) -> Result {
    for (Parameter* q : layer.Parameters()) q->ZeroGrad();
    Var x(x_value, true);
    Tape tape(CpuContext(), /*training=*/true);
    Var y;
    if (fused) {
      y = layer.Forward(tape, block, x).value();
    } else {
      Var x_dst = SliceRows(tape, x, 0, num_dst).value();
      Var h_self = AddBias(tape, MatMul(tape, x_dst, ws).value(), b).value();
      Var agg = Aggregate(tape, block, kernels::Reduce::kMean, x).value();
      y = Add(tape, h_self, MatMul(tape, agg, wn).value()).value();
    }
    // A loss node that hands y the gradient gy as it is.
    Var loss = tape.RecordGrad({y}, Tensor::Zeros({1}, DType::kF32),
                               [y, gy](const ExecContext& ctx, const Tensor&) { return y.AccumulateGrad(ctx, gy); });
    EXPECT_OK(tape.Backward(loss));
    return Result{y.value(), x.grad(), ws.grad(), b.grad(), wn.grad()};
  };
  const Result fused = run(true), separate = run(false);
  EXPECT_TRUE(SameBits(fused.y, separate.y));
  EXPECT_TRUE(SameBits(fused.gx, separate.gx));
  EXPECT_TRUE(SameBits(fused.gws, separate.gws));
  EXPECT_TRUE(SameBits(fused.gb, separate.gb));
  EXPECT_TRUE(SameBits(fused.gwn, separate.gwn));
}

INSTANTIATE_TEST_SUITE_P(Widths, SAGEConvPairTest,
                         ::testing::Values(std::pair<int64_t, int64_t>{24, 40}, std::pair<int64_t, int64_t>{128, 256},
                                           std::pair<int64_t, int64_t>{200, 240}));

// Linear::ForwardRelu (LinearReluOp) is one node for the product, bias and
// ReLU: its output and every gradient are the bits of Relu(Forward(x)),
// with and without a bias, and where the input's gradient already holds a
// contribution (x used twice). Rows and columns enough for several GEMM
// tiles, SumRows chunks and SIMD tails; a bias that sends about half the
// pre-activations negative, and exact zeros among them.
TEST(LinearTest, ForwardReluGivesTheSeparateOpsBits) {
  for (bool with_bias : {true, false}) {
    SCOPED_TRACE(with_bias ? "bias" : "no bias");
    const int64_t n = 1100, in = 37, out = 203;
    Linear layer("fc", in, out, with_bias, RngKey::FromSeed(51));
    RandomizeBiases(layer, 500);
    Tensor x_value = RandomTensor({n, in}, 52);
    for (int64_t j = 0; j < in; ++j) x_value.data<float>()[5 * in + j] = 0.0f;  // a row of exact zeros
    const Tensor gy = RandomTensor({n, out}, 53);
    struct Result {
      Tensor y, gx, gw, gb;
    };
    auto run = [&](bool fused, bool reuse_x) -> Result {
      for (Parameter* q : layer.Parameters()) q->ZeroGrad();
      Var x(x_value, true);
      Tape tape(CpuContext(), /*training=*/true);
      Var y = fused ? layer.ForwardRelu(tape, x).value() : Relu(tape, layer.Forward(tape, x).value()).value();
      // A second use of x, run backward first: x's gradient then holds a
      // contribution when the layer's backward adds its own.
      Var x2 = reuse_x ? Relu(tape, x).value() : y;
      const Tensor gx2 = RandomTensor(x2.shape(), 54);
      Var loss = tape.RecordGrad({y, x2}, Tensor::Zeros({1}, DType::kF32),
                                 [y, x2, gy, gx2, reuse_x](const ExecContext& ctx, const Tensor&) -> Status {
                                   FS_RETURN_IF_ERROR(y.AccumulateGrad(ctx, gy));
                                   return reuse_x ? x2.AccumulateGrad(ctx, gx2) : Status::OK();
                                 });
      EXPECT_OK(tape.Backward(loss));
      auto p = ByName(layer);
      return Result{y.value(), x.grad(), p["fc.weight"]->grad(), with_bias ? p["fc.bias"]->grad() : Tensor()};
    };
    for (bool reuse_x : {false, true}) {
      SCOPED_TRACE(reuse_x ? "x used twice" : "x used once");
      const Result fused = run(true, reuse_x), separate = run(false, reuse_x);
      EXPECT_TRUE(SameBits(fused.y, separate.y));
      EXPECT_TRUE(SameBits(fused.gx, separate.gx));
      EXPECT_TRUE(SameBits(fused.gw, separate.gw));
      if (with_bias) EXPECT_TRUE(SameBits(fused.gb, separate.gb));
      int64_t zeros = 0;
      for (int64_t i = 0; i < fused.y.numel(); ++i) zeros += fused.y.data<float>()[i] == 0.0f;
      EXPECT_GT(zeros, fused.y.numel() / 4);  // ReLU cut a good part
      EXPECT_LT(zeros, 3 * fused.y.numel() / 4);
    }
  }
}

// LinearReluChain (an MLP as one node, the ReLU masks taken on the tiles of
// the GEMMs above them) against the layer-by-layer nodes (ForwardRelu, and
// Forward for a last layer without ReLU): the output and every gradient the
// same bits, at 1 and 3 threads, with and without a ReLU after the last
// layer, where x's gradient already holds a contribution (x used twice),
// for a layer without a bias, and at the DLRM bottom MLP's shapes (row
// tiles on the bias sums' chunk boundaries, so those sums run in the GEMM's
// epilogue) as well as shapes whose tiles split a chunk.
TEST(LinearTest, ReluChainGivesTheLayerByLayerBits) {
  struct ChainCase {
    int64_t n;
    std::vector<int64_t> widths;
    size_t no_bias;  // the layer built without a bias (>= the layer count: none)
  };
  ThreadPool one(1), three(3);
  for (const ChainCase& c : {ChainCase{1100, {37, 203, 150, 64}, 1}, ChainCase{2048, {13, 512, 256, 64}, 9}}) {
    std::vector<std::unique_ptr<Linear>> owned;
    std::vector<Linear*> layers;
    for (size_t i = 0; i + 1 < c.widths.size(); ++i) {
      owned.push_back(std::make_unique<Linear>("fc" + std::to_string(i), c.widths[i], c.widths[i + 1],
                                               /*bias=*/i != c.no_bias, RngKey::FromSeed(60 + i)));
      RandomizeBiases(*owned.back(), 600 + 10 * i);
      layers.push_back(owned.back().get());
    }
    const Tensor x_value = RandomTensor({c.n, c.widths[0]}, 61);
    const Tensor gy = RandomTensor({c.n, c.widths.back()}, 62);
    auto run = [&](bool chain, bool relu_last, bool reuse_x, ThreadPool* pool) -> std::vector<Tensor> {
      for (Linear* l : layers) {
        for (Parameter* q : l->Parameters()) q->ZeroGrad();
      }
      Var x(x_value, true);
      Tape tape(CpuContext(7, pool), /*training=*/true);
      Var y = x;
      if (chain) {
        y = LinearReluChain(tape, x, layers, relu_last).value();
      } else {
        for (size_t i = 0; i < layers.size(); ++i) {
          y = (relu_last || i + 1 < layers.size() ? layers[i]->ForwardRelu(tape, y) : layers[i]->Forward(tape, y))
                  .value();
        }
      }
      Var x2 = reuse_x ? Relu(tape, x).value() : y;
      const Tensor gx2 = RandomTensor(x2.shape(), 63);
      Var loss = tape.RecordGrad({y, x2}, Tensor::Zeros({1}, DType::kF32),
                                 [y, x2, gy, gx2, reuse_x](const ExecContext& ctx, const Tensor&) -> Status {
                                   FS_RETURN_IF_ERROR(y.AccumulateGrad(ctx, gy));
                                   return reuse_x ? x2.AccumulateGrad(ctx, gx2) : Status::OK();
                                 });
      EXPECT_OK(tape.Backward(loss));
      std::vector<Tensor> out{y.value(), x.grad()};
      for (Linear* l : layers) {
        for (Parameter* q : l->Parameters()) out.push_back(q->grad());
      }
      return out;
    };
    for (bool relu_last : {true, false}) {
      for (bool reuse_x : {false, true}) {
        SCOPED_TRACE("n " + std::to_string(c.n) + (relu_last ? ", relu last" : ", no relu last") +
                     (reuse_x ? ", x used twice" : ", x used once"));
        const std::vector<Tensor> want = run(false, relu_last, reuse_x, &one);
        for (ThreadPool* pool : {&one, &three}) {
          const std::vector<Tensor> got = run(true, relu_last, reuse_x, pool);
          ASSERT_EQ(got.size(), want.size());
          for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(SameBits(got[i], want[i])) << "tensor " << i;
        }
      }
    }
  }
}

TEST(LinearTest, ReluChainRejectsLayersThatDoNotFit) {
  Linear a("a", 4, 6, true, RngKey::FromSeed(1)), b("b", 5, 3, true, RngKey::FromSeed(2));
  Tape tape(CpuContext(), /*training=*/true);
  Var x(RandomTensor({2, 4}, 3), true);
  EXPECT_ERROR_CONTAINS(LinearReluChain(tape, x, {&a, &b}, false), "LinearReluChain: b",
                        "does not fit weight");
  EXPECT_ERROR_CONTAINS(LinearReluChain(tape, x, {}, false), "LinearReluChain", "no layers");
}

TEST_P(LayerTest, GCNConv) {
  const BlockCase& c = GetParam();
  kernels::Csr csr = testing::RandomBlock(c.num_dst, c.num_src, 3, c.loops, 21, c.i32);
  GraphBlock block(csr);
  GCNConv layer("gcn", c.in, c.out, RngKey::FromSeed(22));
  EXPECT_EQ(Names(layer), (std::vector<std::string>{"gcn.weight", "gcn.bias"}));
  RandomizeBiases(layer, 300);
  Var x(RandomTensor({c.num_src, c.in}, 23), true);
  {
    auto p = ByName(layer);
    Matrix ref = testing::MatMulRef(testing::MatMulRef(testing::GcnAdjacencyRef(csr), testing::ToMatrix(x.value())),
                                    testing::ToMatrix(p["gcn.weight"]->value()));
    Tape tape(CpuContext(), false);
    ASSERT_OK_AND_ASSIGN(Var y, layer.Forward(tape, block, x));
    testing::ExpectNear(y.value(), testing::Flatten(AddRowVector(ref, p["gcn.bias"]->value())), 1e-5, "GCNConv");
  }
  CheckGradients([&](Tape& t) { return layer.Forward(t, block, x); }, InputAndParams(x, layer), 24);
}

// GAT reference in double: per head, softmax over each destination's
// incoming edges (self loops added where missing) of
// leaky_relu(a_src . h_u + a_dst . h_v), then the weighted sum of h_u.
Matrix GatRef(const kernels::Csr& csr, const Tensor& x, const Module& layer, int heads, int64_t d, bool concat,
              float slope) {
  auto p = ByName(layer);
  const std::string& n = layer.name();
  Matrix h = testing::MatMulRef(testing::ToMatrix(x), testing::ToMatrix(p[n + ".weight"]->value()));
  Matrix as = testing::ToMatrix(p[n + ".attn_src"]->value()), ad = testing::ToMatrix(p[n + ".attn_dst"]->value());
  Matrix a = testing::DenseAdjacency(csr);
  const int64_t nd = csr.num_dst(), ns = csr.num_src;
  for (int64_t v = 0; v < nd; ++v) {
    if (a[v][v] == 0.0) a[v][v] = 1.0;
  }
  Matrix out(nd, std::vector<double>(concat ? heads * d : d, 0.0));
  for (int k = 0; k < heads; ++k) {
    auto dot = [&](int64_t row, const Matrix& att) {
      double s = 0;
      for (int64_t j = 0; j < d; ++j) s += h[row][k * d + j] * att[k][j];
      return s;
    };
    for (int64_t v = 0; v < nd; ++v) {
      std::vector<double> score(ns, 0.0);
      double mx = -1e300;
      for (int64_t u = 0; u < ns; ++u) {
        if (a[v][u] == 0.0) continue;
        const double s = dot(u, as) + dot(v, ad);
        score[u] = s > 0 ? s : slope * s;
        mx = std::max(mx, score[u]);
      }
      double z = 0;
      for (int64_t u = 0; u < ns; ++u) {
        if (a[v][u] != 0.0) z += std::exp(score[u] - mx);
      }
      for (int64_t u = 0; u < ns; ++u) {
        if (a[v][u] == 0.0) continue;
        const double alpha = std::exp(score[u] - mx) / z;
        for (int64_t j = 0; j < d; ++j) {
          const double val = alpha * h[u][k * d + j];
          if (concat) {
            out[v][k * d + j] += val;
          } else {
            out[v][j] += val / heads;
          }
        }
      }
    }
  }
  return AddRowVector(out, p[n + ".bias"]->value());
}

struct GatCase {
  int heads;
  bool concat;
};
void PrintTo(const GatCase& c, std::ostream* os) { *os << c.heads << (c.concat ? " heads concat" : " heads mean"); }

class GatTest : public ::testing::TestWithParam<std::tuple<BlockCase, GatCase>> {};

TEST_P(GatTest, ForwardAndGradients) {
  const BlockCase& c = std::get<0>(GetParam());
  const GatCase& g = std::get<1>(GetParam());
  kernels::Csr csr = testing::RandomBlock(c.num_dst, c.num_src, 3, c.loops, 31, c.i32);
  GraphBlock block(csr);
  GATConv layer("gat", c.in, c.out, g.heads, g.concat, 0.2f, /*attn_dropout=*/0.4f, RngKey::FromSeed(32));
  EXPECT_EQ(Names(layer), (std::vector<std::string>{"gat.weight", "gat.attn_src", "gat.attn_dst", "gat.bias"}));
  EXPECT_EQ(layer.out_features(), g.concat ? g.heads * c.out : c.out);
  RandomizeBiases(layer, 400);
  Var x(RandomTensor({c.num_src, c.in}, 33), true);
  {
    Tape tape(CpuContext(), false);
    ASSERT_OK_AND_ASSIGN(Var y, layer.Forward(tape, block, x));
    EXPECT_EQ(y.shape(), (Shape{c.num_dst, layer.out_features()}));
    testing::ExpectNear(y.value(), testing::Flatten(GatRef(csr, x.value(), layer, g.heads, c.out, g.concat, 0.2f)),
                        1e-5, "GATConv");
  }
  // Evaluation mode (no attention dropout), then training mode, where every
  // evaluation draws the same mask from the same key.
  // A small step: leaky_relu kinks in the scores sit close to some inputs.
  testing::GradCheckOptions fine;
  fine.eps = 3e-4;
  {
    SCOPED_TRACE("evaluation mode");
    CheckGradients([&](Tape& t) { return layer.Forward(t, block, x); }, InputAndParams(x, layer), 34, fine);
  }
  // The training-mode key is chosen so that no parameter of these tiny blocks
  // has all of its attention paths dropped (the check would be vacuous).
  testing::GradCheckOptions train = fine;
  train.training = true;
  Var x2(RandomTensor({c.num_src, c.in}, 35), true);
  SCOPED_TRACE("training mode");
  CheckGradients([&](Tape& t) { return layer.Forward(t, block, x2); }, InputAndParams(x2, layer), 40, train);
}

INSTANTIATE_TEST_SUITE_P(Blocks, LayerTest, ::testing::ValuesIn(kBlockCases),
                         [](const ::testing::TestParamInfo<BlockCase>& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(
    Blocks, GatTest,
    ::testing::Combine(::testing::ValuesIn(kBlockCases),
                       ::testing::Values(GatCase{2, true}, GatCase{1, false}, GatCase{3, false})),
    [](const ::testing::TestParamInfo<std::tuple<BlockCase, GatCase>>& info) {
      const GatCase& g = std::get<1>(info.param);
      return std::string(std::get<0>(info.param).name) + "_" + std::to_string(g.heads) +
             (g.concat ? "_heads_concat" : "_heads_mean");
    });

TEST(GatConvTest, AttentionDropoutChangesOutputOnlyInTraining) {
  GraphBlock block(testing::RandomBlock(6, 6, 4, SelfLoops::kSome, 41));
  GATConv layer("gat", 3, 4, 2, true, 0.2f, 0.5f, RngKey::FromSeed(42));
  Var x(RandomTensor({6, 3}, 43));
  Tape eval1(CpuContext(1), false), eval2(CpuContext(2), false);
  ASSERT_OK_AND_ASSIGN(Var e1, layer.Forward(eval1, block, x));
  ASSERT_OK_AND_ASSIGN(Var e2, layer.Forward(eval2, block, x));
  testing::ExpectBitwiseEqual(e1.value(), e2.value(), "eval outputs under different seeds");
  Tape train1(CpuContext(1), true), train1b(CpuContext(1), true), train2(CpuContext(2), true);
  ASSERT_OK_AND_ASSIGN(Var t1, layer.Forward(train1, block, x));
  ASSERT_OK_AND_ASSIGN(Var t1b, layer.Forward(train1b, block, x));
  ASSERT_OK_AND_ASSIGN(Var t2, layer.Forward(train2, block, x));
  testing::ExpectBitwiseEqual(t1.value(), t1b.value(), "training outputs under one seed");
  EXPECT_NE(std::memcmp(t1.value().raw_data(), t2.value().raw_data(), t1.value().nbytes()), 0);
  EXPECT_NE(std::memcmp(t1.value().raw_data(), e1.value().raw_data(), t1.value().nbytes()), 0);
}

TEST(GatConvTest, RejectsBadArguments) {
  GraphBlock block(testing::RandomBlock(4, 6, 3, SelfLoops::kNone, 51));
  Tape tape(CpuContext(), false);
  GATConv ok("gat", 3, 2, 2, true, 0.2f, 0.0f, RngKey::FromSeed(1));
  EXPECT_ERROR_CONTAINS(ok.Forward(tape, block, Var(RandomTensor({5, 3}, 2))), "GATConv gat", "[5, 3]",
                        "6 sources");
  GATConv no_heads("g0", 3, 2, 0, true, 0.2f, 0.0f, RngKey::FromSeed(1));
  EXPECT_ERROR_CONTAINS(no_heads.Forward(tape, block, Var(RandomTensor({6, 3}, 2))), "GATConv g0", "0 heads");
  GATConv bad_p("g1", 3, 2, 1, true, 0.2f, 1.5f, RngKey::FromSeed(1));
  EXPECT_ERROR_CONTAINS(bad_p.Forward(tape, block, Var(RandomTensor({6, 3}, 2))), "attn_dropout", "[0, 1)");
}

}  // namespace
}  // namespace foresight::autograd
