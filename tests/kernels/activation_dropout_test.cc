#include <algorithm>
#include <cmath>
#include <vector>

#include "foresight/kernels/ops.h"
#include "foresight/kernels/keyed_dropout.h"
#include "kernel_test_util.h"
#include "testing/testing.h"

namespace foresight::kernels {
namespace {

using reference::RefActivation;
using test::RandomF32;
using test::ToDouble;
using test::ToVec;

struct ActCase {
  Activation act;
  RefActivation ref;
  float param;
  const char* name;
};

const ActCase kActs[] = {
    {Activation::kRelu, RefActivation::kRelu, 0.0f, "relu"},
    {Activation::kElu, RefActivation::kElu, 1.3f, "elu"},
    {Activation::kLeakyRelu, RefActivation::kLeakyRelu, 0.2f, "leaky_relu"},
};

// Values away from 0 so central differences never straddle the kink.
Tensor AwayFromZero(const Shape& shape, uint64_t seed) {
  Tensor t = RandomF32(shape, seed, -2.0f, 2.0f);
  for (int64_t i = 0; i < t.numel(); ++i) {
    float& v = t.data<float>()[i];
    if (std::fabs(v) < 0.05f) v = v < 0 ? -0.05f : 0.05f;
  }
  return t;
}

TEST(ActivationTest, ForwardMatchesReferenceAndBackwardMatchesFiniteDifferences) {
  auto ctx = CpuContext();
  for (const ActCase& c : kActs) {
    SCOPED_TRACE(c.name);
    Tensor x = AwayFromZero({40, 50}, 1);
    Tensor y = Tensor::Empty(x.shape(), DType::kF32);
    ASSERT_OK(Activate(ctx, c.act, c.param, x, &y));
    std::vector<double> want;
    for (double v : ToDouble(x)) want.push_back(reference::Activate<double>(c.ref, c.param, v));
    test::ExpectClose(ToVec(y), want, 1e-6, 1e-7, "Activate");

    const auto r = test::RandomWeights(x.numel(), 2);
    Tensor g = Tensor::Empty(x.shape(), DType::kF32), gx = Tensor::Empty(x.shape(), DType::kF32);
    for (int64_t i = 0; i < x.numel(); ++i) g.data<float>()[i] = static_cast<float>(r[i]);
    ASSERT_OK(ActivateBackward(ctx, c.act, c.param, x, g, &gx));
    const auto rg = ToDouble(g);
    auto loss = [&](const std::vector<double>& xv) {
      double s = 0;
      for (size_t i = 0; i < xv.size(); ++i) s += reference::Activate<double>(c.ref, c.param, xv[i]) * rg[i];
      return s;
    };
    std::vector<size_t> checked;
    const auto num = test::NumericGrad(loss, ToDouble(x), 1e-4, 7, &checked);
    test::ExpectGradClose(ToVec(gx), num, checked, 1e-4, 1e-5, "ActivateBackward");
  }
}

TEST(DropoutTest, MaskFollowsTheRngContract) {
  test::TwoPools pools;
  const float p = 0.3f;
  Tensor x = RandomF32({300, 101}, 3);
  Tensor out1 = Tensor::Empty(x.shape(), DType::kF32), out3 = Tensor::Empty(x.shape(), DType::kF32);
  Tensor m1 = Tensor::Empty({x.numel()}, DType::kU8), m3 = Tensor::Empty({x.numel()}, DType::kU8);
  ASSERT_OK(Dropout(pools.ctx1, p, x, &out1, &m1));
  ASSERT_OK(Dropout(pools.ctx3, p, x, &out3, &m3));
  EXPECT_TRUE(test::BitwiseEqual(out1, out3));
  EXPECT_TRUE(test::BitwiseEqual(m1, m3));
  const auto vx = ToVec(x), vo = ToVec(out1);
  int64_t kept = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const bool keep = pools.ctx1.rng.StreamUniform(static_cast<uint64_t>(i), 0) >= p;
    ASSERT_EQ(m1.data<uint8_t>()[i], keep ? 1 : 0) << i;
    ASSERT_EQ(vo[i], keep ? vx[i] * (1.0f / (1.0f - p)) : 0.0f) << i;
    kept += keep;
  }
  EXPECT_NEAR(static_cast<double>(kept) / x.numel(), 1.0 - p, 0.02);

  Tensor g = RandomF32(x.shape(), 4), gx = Tensor::Empty(x.shape(), DType::kF32);
  ASSERT_OK(DropoutBackward(pools.ctx3, p, m1, g, &gx));
  const auto vg = ToVec(g), vgx = ToVec(gx);
  for (int64_t i = 0; i < x.numel(); ++i) {
    ASSERT_EQ(vgx[i], m1.data<uint8_t>()[i] ? vg[i] * (1.0f / (1.0f - p)) : 0.0f);
  }
}

TEST(DropoutTest, ZeroProbabilityKeepsEverythingAndSeedsDiffer) {
  Tensor x = RandomF32({1000}, 5);
  Tensor out = Tensor::Empty(x.shape(), DType::kF32);
  ASSERT_OK(Dropout(CpuContext(1), 0.0f, x, &out, nullptr));
  EXPECT_TRUE(test::BitwiseEqual(x, out));
  Tensor a = Tensor::Empty(x.shape(), DType::kF32), b = Tensor::Empty(x.shape(), DType::kF32);
  ASSERT_OK(Dropout(CpuContext(1), 0.5f, x, &a, nullptr));
  ASSERT_OK(Dropout(CpuContext(2), 0.5f, x, &b, nullptr));
  EXPECT_FALSE(test::BitwiseEqual(a, b));
}

// Rows keyed by id take the decisions of that row of a virtual matrix:
// positions 0..R-1 give Dropout's bits; other ids (unaligned starts with 37
// columns, SIMD spans with 256) follow the stream contract.
TEST(DropoutTest, RowsKeyedByIdFollowTheirIds) {
  test::TwoPools pools;
  const float p = 0.35f;
  for (const int64_t cols : {int64_t{37}, int64_t{256}}) {
    const int64_t rows = 150;
    Tensor x = RandomF32({rows, cols}, 6);
    Tensor position = Tensor::Empty({rows}, DType::kI64), scattered = Tensor::Empty({rows}, DType::kI64);
    for (int64_t r = 0; r < rows; ++r) {
      position.data<int64_t>()[r] = r;
      scattered.data<int64_t>()[r] = (r * 104729 + 11) % 1000003;
    }
    Tensor plain = Tensor::Empty(x.shape(), DType::kF32), keyed = Tensor::Empty(x.shape(), DType::kF32);
    Tensor pm = Tensor::Empty({x.numel()}, DType::kU8), km = Tensor::Empty({x.numel()}, DType::kU8);
    ASSERT_OK(Dropout(pools.ctx1, p, x, &plain, &pm));
    ASSERT_OK(DropoutRows(pools.ctx3, p, x, position, &keyed, &km));
    EXPECT_TRUE(test::BitwiseEqual(plain, keyed)) << cols << " columns";
    EXPECT_TRUE(test::BitwiseEqual(pm, km)) << cols << " columns";

    Tensor out1 = Tensor::Empty(x.shape(), DType::kF32), out3 = Tensor::Empty(x.shape(), DType::kF32);
    Tensor m1 = Tensor::Empty({x.numel()}, DType::kU8), m3 = Tensor::Empty({x.numel()}, DType::kU8);
    ASSERT_OK(DropoutRows(pools.ctx1, p, x, scattered, &out1, &m1));
    ASSERT_OK(DropoutRows(pools.ctx3, p, x, scattered, &out3, &m3));
    EXPECT_TRUE(test::BitwiseEqual(out1, out3));
    const auto vx = ToVec(x), vo = ToVec(out1);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const uint64_t g = static_cast<uint64_t>(scattered.data<int64_t>()[r] * cols + c);
        const bool keep = pools.ctx1.rng.StreamUniform(g, 0) >= p;
        const int64_t i = r * cols + c;
        ASSERT_EQ(m1.data<uint8_t>()[i], keep ? 1 : 0) << r << "," << c;
        ASSERT_EQ(vo[i], keep ? vx[i] * (1.0f / (1.0f - p)) : 0.0f) << r << "," << c;
      }
    }
  }
}

// An edge's key depends on its ends' global ids, not on where the block
// numbers them: the same edges under two local numberings get equal keys.
TEST(DropoutTest, EdgeKeysFollowGlobalEnds) {
  auto ctx = CpuContext();
  // Global graph: 7 -> 5, 9 -> 5, 5 -> 5, 9 -> 8. Block A numbers sources
  // (5, 8, 7, 9); block B numbers them (8, 5, 9, 7).
  const auto block = [](std::vector<int64_t> indptr, std::vector<int64_t> indices, std::vector<int64_t> ids) {
    Csr c;
    c.indptr = Tensor::Empty({static_cast<int64_t>(indptr.size())}, DType::kI64);
    c.indices = Tensor::Empty({static_cast<int64_t>(indices.size())}, DType::kI64);
    std::copy(indptr.begin(), indptr.end(), c.indptr.data<int64_t>());
    std::copy(indices.begin(), indices.end(), c.indices.data<int64_t>());
    c.num_src = static_cast<int64_t>(ids.size());
    Tensor t = Tensor::Empty({c.num_src}, DType::kI64);
    std::copy(ids.begin(), ids.end(), t.data<int64_t>());
    return std::make_pair(c, t);
  };
  const auto a = block({0, 3, 4}, {2, 3, 0, 3}, {5, 8, 7, 9});
  const auto b = block({0, 1, 4}, {2, 1, 2, 3}, {8, 5, 9, 7});
  Tensor ka, kb;
  ASSERT_OK(DropoutEdgeKeys(ctx, a.first, a.second, &ka));
  ASSERT_OK(DropoutEdgeKeys(ctx, b.first, b.second, &kb));
  const int64_t* x = ka.data<int64_t>();
  const int64_t* y = kb.data<int64_t>();
  EXPECT_EQ(x[0], y[3]);  // 7 -> 5
  EXPECT_EQ(x[1], y[2]);  // 9 -> 5
  EXPECT_EQ(x[2], y[1]);  // 5 -> 5
  EXPECT_EQ(x[3], y[0]);  // 9 -> 8
  EXPECT_EQ(x[0], DropoutEdgeKey(5, 7));
  EXPECT_NE(x[0], x[1]);
  EXPECT_NE(DropoutEdgeKey(5, 7), DropoutEdgeKey(7, 5));  // direction counts
  Tensor short_ids = Tensor::Empty({3}, DType::kI64);
  Tensor k;
  EXPECT_ERROR_CONTAINS(DropoutEdgeKeys(ctx, a.first, short_ids, &k), "DropoutEdgeKeys: src_ids", "4 sources");
}

TEST(DropoutTest, ErrorsNameTheProblem) {
  auto ctx = CpuContext();
  Tensor x = RandomF32({10}, 1), out = Tensor::Empty({10}, DType::kF32);
  Tensor mask = Tensor::Empty({9}, DType::kU8), fmask = Tensor::Empty({10}, DType::kF32);
  EXPECT_ERROR_CONTAINS(Dropout(ctx, 1.0f, x, &out, nullptr), "Dropout: p must be in [0, 1)");
  EXPECT_ERROR_CONTAINS(Dropout(ctx, 0.5f, x, &out, &mask), "Dropout: mask", "10 elements", "9");
  EXPECT_ERROR_CONTAINS(DropoutBackward(ctx, 0.5f, fmask, x, &out), "DropoutBackward: mask", "u8", "f32");
  EXPECT_ERROR_CONTAINS(Activate(ctx, Activation::kRelu, 0, x, nullptr), "Activate: out");
  Tensor ids = Tensor::Empty({9}, DType::kI64), fids = Tensor::Empty({10}, DType::kF32);
  EXPECT_ERROR_CONTAINS(DropoutRows(ctx, 0.5f, x, ids, &out, nullptr), "DropoutRows: row_ids", "one id per row");
  EXPECT_ERROR_CONTAINS(DropoutRows(ctx, 0.5f, x, fids, &out, nullptr), "DropoutRows: row_ids", "i64");
}

}  // namespace
}  // namespace foresight::kernels
