#include "foresight/core/dtype.h"

#include <cmath>
#include <limits>

#include "testing/testing.h"

namespace foresight {
namespace {

TEST(DType, HalfRoundTripsExactValues) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f) << f;
  }
  EXPECT_TRUE(std::isinf(HalfToFloat(FloatToHalf(1e6f))));
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::numeric_limits<float>::quiet_NaN()))));
  // 1 + 2^-11 is halfway between 1 and the next half: rounds to even (1).
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + 0.00048828125f)), 1.0f);
}

TEST(DType, BFloat16) {
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.0f)), 1.0f);
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(-3.0f)), -3.0f);
  EXPECT_NEAR(BFloat16ToFloat(FloatToBFloat16(3.14159f)), 3.14159f, 0.02f);
}

TEST(DType, NamesAndParse) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kI32, DType::kI64, DType::kU8}) {
    ASSERT_OK_AND_ASSIGN(DType p, ParseDType(DTypeName(d)));
    EXPECT_EQ(p, d);
  }
  EXPECT_ERROR_CONTAINS(ParseDType("f64"), "dtype 'f64'");
}

}  // namespace
}  // namespace foresight
