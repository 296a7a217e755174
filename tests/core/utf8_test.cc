#include "foresight/core/utf8.h"

#include <string>

#include "testing/testing.h"

namespace foresight {
namespace {

TEST(Utf8, AcceptsWellFormedText) {
  for (const std::string& s : {std::string(), std::string("plain ascii\n"),
                              std::string("\xC2\x80 \xDF\xBF"),           // U+0080, U+07FF
                              std::string("\xE0\xA0\x80 \xEF\xBF\xBF"),   // U+0800, U+FFFF
                              std::string("\xED\x9F\xBF \xEE\x80\x80"),   // around the surrogates
                              std::string("\xF0\x90\x80\x80 \xF4\x8F\xBF\xBF"),  // U+10000, U+10FFFF
                              std::string("\xEF\xBB\xBF" "key = 1"),      // a byte-order mark
                              std::string("nul \0 inside", 12)}) {
    EXPECT_FALSE(FindInvalidUtf8(s).has_value()) << s;
    EXPECT_OK(CheckUtf8(s, "f"));
  }
}

TEST(Utf8, RejectsEachKindOfBadSequence) {
  struct Case {
    std::string text;
    size_t offset;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"ab\xE5", 2},                  // cut short by the end (the toml11 over-read)
           {"a\xE5\x80", 1},               // cut short by the end, one byte in
           {"\xE5" "ab", 0},               // cut short by an ASCII byte
           {"x\x80", 1},                   // a lone continuation byte
           {"\xC0\x80", 0},                // overlong NUL
           {"\xC1\xBF", 0},                // overlong
           {"\xE0\x80\x80", 0},            // overlong 3-byte
           {"\xF0\x80\x80\x80", 0},        // overlong 4-byte
           {"\xED\xA0\x80", 0},            // a surrogate (U+D800)
           {"\xF4\x90\x80\x80", 0},        // above U+10FFFF
           {"\xF5\x80\x80\x80", 0},        // lead byte that never occurs
           {"ok \xFF", 3},
           {"\xE2\x82\xAC\xE2\x82", 3},    // a full euro sign, then a cut one
       }) {
    const auto e = FindInvalidUtf8(c.text);
    ASSERT_TRUE(e.has_value()) << ::testing::PrintToString(c.text);
    EXPECT_EQ(e->offset, c.offset) << ::testing::PrintToString(c.text);
    EXPECT_EQ(e->byte, static_cast<uint8_t>(c.text[c.offset]));
  }
}

TEST(Utf8, ErrorNamesFileLineColumnAndOffset) {
  const std::string text = "a = 1\nbb = '\xE5'\n";
  const auto e = FindInvalidUtf8(text);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->line, 2);
  EXPECT_EQ(e->column, 7);
  EXPECT_EQ(e->offset, 12u);
  EXPECT_ERROR_CONTAINS(CheckUtf8(text, "run.toml"), "run.toml:2:7: invalid UTF-8 (byte 0xE5 at byte offset 12)");
  EXPECT_EQ(CheckUtf8(text, "run.toml").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace foresight
