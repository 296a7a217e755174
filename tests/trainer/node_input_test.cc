// The model's node inputs (trainer/src/node_input.h): degree features, and
// the input table read as an embedding bag of sparse rows (x W summed from
// W's rows, never a dense x) or as one row per node (one-hot), with the
// table's gradient X^T dy.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "foresight/autograd/functional.h"
#include "foresight/core/thread_pool.h"
#include "node_input.h"
#include "testing/testing.h"

namespace foresight::trainer::internal {
namespace {

using autograd::Tape;
using autograd::Var;
using foresight::testing::TensorOf;
using foresight::testing::VectorOf;

// A GPU run reads dense rows only; the check is pure (no GPU needed).
TEST(NodeInputTest, OnCudaOnlyDenseRowsAreRead) {
  NodeInput dense;
  dense.kind = "file";
  dense.dense = Tensor::Zeros({3, 2}, DType::kF32);
  EXPECT_OK(CheckInputOnDevice(dense, Device::Cpu(), "/d"));
  EXPECT_OK(CheckInputOnDevice(dense, Device::Cuda(1), "/d"));
  NodeInput sparse;
  sparse.kind = "file";
  sparse.table = true;
  EXPECT_OK(CheckInputOnDevice(sparse, Device::Cpu(), "/d"));
  const Status s = CheckInputOnDevice(sparse, Device::Cuda(1), "/data/sparse");
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_ERROR_CONTAINS(s, "device: cuda:1", "/data/sparse", "input table", "does not run on a GPU yet",
                        "does not fall back");
}

TEST(NodeInputTest, DegreeFeaturesAreLogDegreeAndBuckets) {
  const Tensor f = DegreeFeatures(TensorOf<int64_t>({0, 0, 1, 4, 11}));  // in-degrees 0, 1, 3, 7
  ASSERT_EQ(f.shape(), (Shape{4, kDegreeFeatureDim}));
  const int64_t degree[] = {0, 1, 3, 7};
  const int64_t bucket[] = {0, 1, 2, 3};  // floor(log2(1 + d))
  for (int v = 0; v < 4; ++v) {
    const float* row = f.data<float>() + v * kDegreeFeatureDim;
    EXPECT_FLOAT_EQ(row[0], static_cast<float>(std::log1p(static_cast<double>(degree[v]))));
    for (int64_t b = 0; b < kDegreeBuckets; ++b) EXPECT_EQ(row[1 + b], b == bucket[v] ? 1.0f : 0.0f) << v << " " << b;
  }
}

Tensor Ones(const Shape& shape) {
  Tensor t = Tensor::Empty(shape, DType::kF32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = 1.0f;
  return t;
}

class InputTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ModelConfig c;
    c.kind = "gcn";
    c.in_features = 5;
    c.num_classes = 2;
    c.hidden = 3;
    c.input_table = true;
    ASSERT_OK_AND_ASSIGN(model_, CreateModel(c));
    ASSERT_NE(model_->input_table(), nullptr);
    EXPECT_EQ(model_->LayerInputDim(0), 3);  // layer 0 reads the table's columns
    // Rows: node 0 {1: 2.0, 4: 0.5}, node 1 {}, node 2 {0: 1.0, 1: 1.0}.
    in_.table = true;
    in_.width = 5;
    in_.indptr = TensorOf<int64_t>({0, 2, 2, 4});
    in_.indices = TensorOf<int32_t>({1, 4, 0, 1});
    in_.values = TensorOf<float>({2.0f, 0.5f, 1.0f, 1.0f});
  }
  // w[f][j] of the table.
  float W(int64_t f, int64_t j) const { return model_->input_table()->value().data<float>()[f * 3 + j]; }
  // sum of all entries of y, recorded (a scalar loss whose dy is all ones).
  StatusOr<Var> SumAll(Tape& tape, const Var& y) {
    FS_ASSIGN_OR_RETURN(Var col, autograd::MatMul(tape, y, Var(Ones({3, 1}))));
    const int64_t rows = y.shape()[0];
    return autograd::MatMul(tape, Var(Ones({1, rows})), col);
  }

  ThreadPool pool_{2};
  std::unique_ptr<GnnModel> model_;
  NodeInput in_;
};

TEST_F(InputTableTest, SparseRowsAreBagsOfTableRowsWithTheirGradient) {
  Tape tape(CpuContext(0, &pool_), /*training=*/true);
  const Tensor ids = TensorOf<int64_t>({2, 0, 1, 2});
  ASSERT_OK_AND_ASSIGN(Var y, InputRows(tape, *model_, in_, ids));
  ASSERT_EQ(y.shape(), (Shape{4, 3}));
  const float* out = y.value().data<float>();
  for (int64_t j = 0; j < 3; ++j) {
    EXPECT_FLOAT_EQ(out[0 * 3 + j], W(0, j) + W(1, j));
    EXPECT_FLOAT_EQ(out[1 * 3 + j], 2.0f * W(1, j) + 0.5f * W(4, j));
    EXPECT_EQ(out[2 * 3 + j], 0.0f);  // a node without features
    EXPECT_FLOAT_EQ(out[3 * 3 + j], W(0, j) + W(1, j));
  }
  ASSERT_OK_AND_ASSIGN(Var loss, SumAll(tape, y));
  ASSERT_OK(tape.Backward(loss));
  // d loss / d W[f][j] = sum over the rows of their value at f.
  const std::vector<float> per_feature = {2.0f, 2.0f + 2.0f, 0.0f, 0.0f, 0.5f};
  const Tensor& g = model_->input_table()->grad();
  ASSERT_TRUE(g.defined());
  for (int64_t f = 0; f < 5; ++f) {
    for (int64_t j = 0; j < 3; ++j) EXPECT_FLOAT_EQ(g.data<float>()[f * 3 + j], per_feature[f]) << f << " " << j;
  }
}

TEST_F(InputTableTest, AllRowsWithoutGradientsMatchTheBatchRows) {
  ASSERT_OK_AND_ASSIGN(Tensor all, AllInputRows(CpuContext(0, &pool_), *model_, in_));
  ASSERT_EQ(all.shape(), (Shape{3, 3}));
  for (int64_t j = 0; j < 3; ++j) EXPECT_FLOAT_EQ(all.data<float>()[j], 2.0f * W(1, j) + 0.5f * W(4, j));
}

TEST_F(InputTableTest, OneHotRowsAreTableRows) {
  in_.indptr = in_.indices = in_.values = Tensor();  // row v is e_v
  Tape tape(CpuContext(0, &pool_), /*training=*/true);
  ASSERT_OK_AND_ASSIGN(Var y, InputRows(tape, *model_, in_, TensorOf<int64_t>({4, 1})));
  for (int64_t j = 0; j < 3; ++j) {
    EXPECT_EQ(y.value().data<float>()[j], W(4, j));
    EXPECT_EQ(y.value().data<float>()[3 + j], W(1, j));
  }
  ASSERT_OK_AND_ASSIGN(Var loss, SumAll(tape, y));
  ASSERT_OK(tape.Backward(loss));
  const std::vector<float> g = VectorOf<float>(model_->input_table()->grad().Reshape({15}).value());
  for (int64_t f = 0; f < 5; ++f) {
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(g[f * 3 + j], (f == 4 || f == 1) ? 1.0f : 0.0f);
  }
}

TEST(NodeInputTest, AModelWithoutATableIsNotFedTableRows) {
  ModelConfig c;
  c.in_features = 5;
  c.num_classes = 2;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<GnnModel> model, CreateModel(c));
  EXPECT_EQ(model->input_table(), nullptr);
  NodeInput in;
  in.table = true;
  in.width = 5;
  ThreadPool pool(1);
  Tape tape(CpuContext(0, &pool), /*training=*/false, /*record=*/false);
  EXPECT_ERROR_CONTAINS(InputRows(tape, *model, in, TensorOf<int64_t>({0})), "no input table");
}

}  // namespace
}  // namespace foresight::trainer::internal
