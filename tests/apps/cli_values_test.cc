#include "cli_values.h"

#include "testing/testing.h"

namespace foresight::apps {
namespace {

TEST(ParseByteSize, Units) {
  ASSERT_OK_AND_ASSIGN(size_t a, ParseByteSize("1048576", "--m"));
  EXPECT_EQ(a, 1048576u);
  ASSERT_OK_AND_ASSIGN(size_t b, ParseByteSize("512M", "--m"));
  EXPECT_EQ(b, 512u << 20);
  ASSERT_OK_AND_ASSIGN(size_t c, ParseByteSize("4G", "--m"));
  EXPECT_EQ(c, size_t{4} << 30);
  ASSERT_OK_AND_ASSIGN(size_t d, ParseByteSize("1.5GiB", "--m"));
  EXPECT_EQ(d, size_t{3} << 29);
  ASSERT_OK_AND_ASSIGN(size_t e, ParseByteSize("64kb", "--m"));
  EXPECT_EQ(e, 64u << 10);
  ASSERT_OK_AND_ASSIGN(size_t f, ParseByteSize("2T", "--m"));
  EXPECT_EQ(f, size_t{2} << 40);
}

TEST(ParseByteSize, Errors) {
  EXPECT_ERROR_CONTAINS(ParseByteSize("", "--memory-budget"), "--memory-budget", "byte size");
  EXPECT_ERROR_CONTAINS(ParseByteSize("lots", "--memory-budget"), "'lots'");
  EXPECT_ERROR_CONTAINS(ParseByteSize("4X", "--memory-budget"), "'4X'");
  EXPECT_ERROR_CONTAINS(ParseByteSize("1.5", "--memory-budget"), "'1.5'");
  EXPECT_ERROR_CONTAINS(ParseByteSize("-1G", "--memory-budget"), "'-1G'");
  EXPECT_ERROR_CONTAINS(ParseByteSize("0", "--memory-budget"), "out of range");
}

TEST(ParseNumberList, CountAndValues) {
  ASSERT_OK_AND_ASSIGN(auto v, ParseNumberList("0.57,0.19,0.19", 3, "--rmat"));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_DOUBLE_EQ(v[0], 0.57);
  EXPECT_DOUBLE_EQ(v[2], 0.19);
  EXPECT_ERROR_CONTAINS(ParseNumberList("0.5,0.2", 3, "--rmat"), "--rmat", "expected 3", "got 2");
  EXPECT_ERROR_CONTAINS(ParseNumberList("0.5,x,0.2", 3, "--rmat"), "--rmat", "'0.5,x,0.2'");
  EXPECT_ERROR_CONTAINS(ParseNumberList("0.5,,0.2", 3, "--rmat"), "--rmat");
}

}  // namespace
}  // namespace foresight::apps
