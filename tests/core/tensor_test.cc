#include "foresight/core/tensor.h"

#include "testing/testing.h"

namespace foresight {
namespace {

TEST(Tensor, EmptyShapeStrides) {
  Tensor t = Tensor::Zeros({2, 3}, DType::kF32);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.strides(), (Shape{3, 1}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.ToString(), "Tensor(f32, [2, 3], cpu)");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kHostAlign, 0u);
}

TEST(Tensor, SliceSelectTransposeAreViews) {
  Tensor t = Tensor::Empty({3, 4}, DType::kI32);
  for (int i = 0; i < 12; ++i) t.data<int32_t>()[i] = i;
  Tensor s = t.Slice(0, 1, 3);
  EXPECT_EQ(s.shape(), (Shape{2, 4}));
  EXPECT_EQ(s.data<int32_t>()[0], 4);
  Tensor col = t.Select(1, 2);
  EXPECT_EQ(col.shape(), (Shape{3}));
  EXPECT_FALSE(col.is_contiguous());
  Tensor tt = t.Transpose(0, 1);
  ASSERT_OK_AND_ASSIGN(Tensor c, tt.Contiguous());
  EXPECT_EQ(c.shape(), (Shape{4, 3}));
  EXPECT_EQ(c.data<int32_t>()[1], 4);  // tt[0][1] = t[1][0]
  s.data<int32_t>()[0] = 100;
  EXPECT_EQ(t.data<int32_t>()[4], 100);
}

TEST(Tensor, FromBlobKeepsOwnerAlive) {
  auto owner = std::make_shared<std::vector<float>>(8, 1.5f);
  Tensor t = Tensor::FromBlob(owner->data(), {2, 4}, DType::kF32, Device::Cpu(), owner);
  std::weak_ptr<std::vector<float>> weak = owner;
  owner.reset();
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(t.data<float>()[7], 1.5f);
}

TEST(Tensor, ReshapeAndErrors) {
  Tensor t = Tensor::Zeros({4, 6}, DType::kF32);
  ASSERT_OK_AND_ASSIGN(Tensor r, t.Reshape({2, 12}));
  EXPECT_EQ(r.shape(), (Shape{2, 12}));
  EXPECT_ERROR_CONTAINS(t.Reshape({5, 5}), "cannot reshape [4, 6] to [5, 5]");
  EXPECT_ERROR_CONTAINS(CheckShape(t, {4, 5}, "x"), "x: expected shape [4, 5], got [4, 6]");
  EXPECT_ERROR_CONTAINS(CheckDType(t, DType::kI64, "ids"), "expected dtype i64, got f32");
}

TEST(Tensor, CudaRefusedClearlyWithoutGpu) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a GPU is present; this checks the no-GPU message";
  auto r = Tensor::EmptyOn(Device::Cuda(0), {4}, DType::kF32);
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.status().message().empty());
}

TEST(Tensor, FillAllDtypes) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kI32, DType::kI64}) {
    Tensor t = Tensor::Empty({5}, d);
    ASSERT_OK(t.Fill(3));
    if (d == DType::kF32) { EXPECT_EQ(t.data<float>()[4], 3.0f); }
    if (d == DType::kF16) { EXPECT_EQ(HalfToFloat(static_cast<uint16_t*>(t.raw_data())[4]), 3.0f); }
    if (d == DType::kBF16) { EXPECT_EQ(BFloat16ToFloat(static_cast<uint16_t*>(t.raw_data())[4]), 3.0f); }
    if (d == DType::kI64) { EXPECT_EQ(t.data<int64_t>()[4], 3); }
  }
}

}  // namespace
}  // namespace foresight
