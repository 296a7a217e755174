// LineReader over plain / gzip / xz (chosen by magic bytes), truncated
// streams, and the tokenizer's strict parsing.
#include <string>
#include <vector>

#include "compress_util.h"
#include "foresight/datasets/line_reader.h"
#include "foresight/datasets/tokenizer.h"
#include "testing/testing.h"

namespace foresight::datasets {
namespace {

using testing::TempDir;
using testing::WriteFile;

std::vector<std::string> ReadAll(const std::string& path, std::vector<int64_t>* numbers, Status* status) {
  auto r = LineReader::Open(path);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::vector<std::string> lines;
  std::string_view line;
  while ((*r)->Next(&line)) {
    lines.emplace_back(line);
    numbers->push_back((*r)->line_number());
  }
  *status = (*r)->status();
  return lines;
}

std::string BigText() {
  std::string s;
  for (int i = 0; i < 110000; ++i) s += std::to_string(i) + "\t" + std::to_string(i * 7) + "\r\n";
  s += "last line without newline";
  return s;
}

TEST(LineReader, PlainGzipXzGiveTheSameLines) {
  TempDir dir;
  const std::string text = BigText();  // > 1 MiB: lines straddle refills
  WriteFile(dir.File("a.txt"), text);
  WriteFile(dir.File("a.gz.renamed"), testutil::Gzip(text));  // detected by magic, not name
  WriteFile(dir.File("a.xz"), testutil::Xz(text));
  std::vector<std::string> expect;
  {
    size_t b = 0;
    while (true) {
      const size_t e = text.find('\n', b);
      std::string l = text.substr(b, e == std::string::npos ? std::string::npos : e - b);
      if (!l.empty() && l.back() == '\r') l.pop_back();
      expect.push_back(l);
      if (e == std::string::npos) break;
      b = e + 1;
    }
  }
  for (const char* name : {"a.txt", "a.gz.renamed", "a.xz"}) {
    std::vector<int64_t> numbers;
    Status s;
    const auto lines = ReadAll(dir.File(name), &numbers, &s);
    ASSERT_OK(s);
    EXPECT_EQ(lines, expect) << name;
    EXPECT_EQ(numbers.back(), static_cast<int64_t>(expect.size())) << name;
  }
  auto gz = LineReader::Open(dir.File("a.gz.renamed"));
  ASSERT_OK(gz.status());
  EXPECT_EQ((*gz)->compression(), Compression::kGzip);
}

TEST(LineReader, ConcatenatedGzipMembers) {
  TempDir dir;
  WriteFile(dir.File("c.gz"), testutil::Gzip("a\nb\n") + testutil::Gzip("c\n"));
  std::vector<int64_t> numbers;
  Status s;
  EXPECT_EQ(ReadAll(dir.File("c.gz"), &numbers, &s), (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_OK(s);
}

TEST(LineReader, TruncatedStreamsAreDataLoss) {
  TempDir dir;
  const std::string text = BigText();
  const std::string xz = testutil::Xz(text);
  const std::string gz = testutil::Gzip(text);
  WriteFile(dir.File("t.xz"), xz.substr(0, xz.size() / 2));
  WriteFile(dir.File("t.gz"), gz.substr(0, gz.size() / 2));
  std::vector<int64_t> numbers;
  Status s;
  ReadAll(dir.File("t.xz"), &numbers, &s);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_ERROR_CONTAINS(s, "t.xz", "truncated (unexpected end of xz stream)");
  ReadAll(dir.File("t.gz"), &numbers, &s);
  EXPECT_ERROR_CONTAINS(s, "t.gz", "truncated (unexpected end of gzip stream)");
}

TEST(LineReader, MissingFileIsNotFound) {
  EXPECT_ERROR_CONTAINS(LineReader::Open("/nonexistent/x.txt"), "/nonexistent/x.txt");
}

TEST(Tokenizer, SplitsAndDetects) {
  std::vector<std::string_view> f;
  SplitFields("  1 \t 2  3 ", Delimiter::kWhitespace, &f);
  EXPECT_EQ(f, (std::vector<std::string_view>{"1", "2", "3"}));
  SplitFields("1, 2,,3", Delimiter::kAuto, &f);
  EXPECT_EQ(f, (std::vector<std::string_view>{"1", "2", "", "3"}));
  SplitFields("a b\tc", Delimiter::kAuto, &f);
  EXPECT_EQ(f, (std::vector<std::string_view>{"a b", "c"}));
  EXPECT_TRUE(IsBlankOrComment("   # x"));
  EXPECT_TRUE(IsBlankOrComment("%x"));
  EXPECT_TRUE(IsBlankOrComment("  "));
  EXPECT_FALSE(IsBlankOrComment("1 # x"));
}

// RFC 4180: quoted fields hold separators and doubled quotes; a quote
// inside an unquoted field is data; a quote that never closes is an error.
TEST(Tokenizer, QuotedFields) {
  std::vector<std::string_view> f;
  std::string scratch, error;
  ASSERT_TRUE(SplitQuotedFields(R"(7,"Smith, Jones ""the"" band", tvshow)", Delimiter::kAuto, &f, &scratch, &error));
  EXPECT_EQ(f, (std::vector<std::string_view>{"7", R"(Smith, Jones "the" band)", "tvshow"}));
  ASSERT_TRUE(SplitQuotedFields(" \" a\tb \" \t2\t\"\"", Delimiter::kTab, &f, &scratch, &error));
  EXPECT_EQ(f, (std::vector<std::string_view>{" a\tb ", "2", ""}));
  ASSERT_TRUE(SplitQuotedFields(R"(O"Neil,1)", Delimiter::kComma, &f, &scratch, &error));
  EXPECT_EQ(f, (std::vector<std::string_view>{R"(O"Neil)", "1"}));
  ASSERT_TRUE(SplitQuotedFields(R"("a b" "c")", Delimiter::kWhitespace, &f, &scratch, &error));
  EXPECT_EQ(f.size(), 3u);  // no quoting between blanks: ids hold no spaces
  EXPECT_FALSE(SplitQuotedFields(R"(1,"open, never closed)", Delimiter::kComma, &f, &scratch, &error));
  EXPECT_NE(error.find("unterminated quoted field in column 2"), std::string::npos) << error;
  EXPECT_FALSE(SplitQuotedFields(R"("a"b,1)", Delimiter::kComma, &f, &scratch, &error));
  EXPECT_NE(error.find("text after the closing quote in column 1"), std::string::npos) << error;
}

TEST(Tokenizer, StrictIntegers) {
  int64_t v;
  EXPECT_TRUE(ParseInt64("-42", &v));
  EXPECT_EQ(v, -42);
  EXPECT_TRUE(ParseInt64("+7", &v));
  EXPECT_EQ(v, 7);
  for (const char* bad : {"", "1.0", "12abc", " 1", "+-1", "99999999999999999999", "0x10"}) {
    EXPECT_FALSE(ParseInt64(bad, &v)) << bad;
  }
}

TEST(Tokenizer, FloatsRejectNaNAndInf) {
  float v;
  EXPECT_EQ(ParseFloat("1.5e-3", &v), FloatParse::kOk);
  EXPECT_FLOAT_EQ(v, 1.5e-3f);
  EXPECT_EQ(ParseFloat("+2", &v), FloatParse::kOk);
  EXPECT_EQ(ParseFloat("1e-60", &v), FloatParse::kOk);  // underflow to 0 is fine
  EXPECT_EQ(ParseFloat("nan", &v), FloatParse::kNaN);
  EXPECT_EQ(ParseFloat("-NaN", &v), FloatParse::kNaN);
  EXPECT_EQ(ParseFloat("inf", &v), FloatParse::kInf);
  EXPECT_EQ(ParseFloat("-Infinity", &v), FloatParse::kInf);
  EXPECT_EQ(ParseFloat("1e60", &v), FloatParse::kOutOfRange);
  EXPECT_EQ(ParseFloat("1.2.3", &v), FloatParse::kInvalid);
  EXPECT_EQ(ParseFloat("", &v), FloatParse::kInvalid);
}

}  // namespace
}  // namespace foresight::datasets
