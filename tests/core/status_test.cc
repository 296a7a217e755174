#include "foresight/core/status.h"

#include <cerrno>

#include "testing/testing.h"

namespace foresight {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Status UseHalf(int x, int* out) {
  FS_ASSIGN_OR_RETURN(*out, Half(x));
  return Status::OK();
}

TEST(Status, OkAndErrors) {
  EXPECT_TRUE(Status::OK().ok());
  Status s = NotFound("file x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NotFound: file x");
  EXPECT_EQ(s.WithContext("open").message(), "open: file x");
  EXPECT_EQ(ErrnoError("open /x", ENOSPC).code(), StatusCode::kResourceExhausted);
}

TEST(Status, AssignOrReturn) {
  int v = 0;
  ASSERT_OK(UseHalf(4, &v));
  EXPECT_EQ(v, 2);
  EXPECT_ERROR_CONTAINS(UseHalf(3, &v), "odd: 3");
}

}  // namespace
}  // namespace foresight
