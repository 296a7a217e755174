// The line tokenizer every text format goes through: delimiter detection,
// field splitting (plain and RFC 4180 quoted) and the strict integer /
// float parsers. The first byte picks the delimiter; the rest is one line.
#include <cmath>

#include "foresight/datasets/tokenizer.h"
#include "fuzz_util.h"

using namespace foresight;
using namespace foresight::datasets;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const Delimiter kDelims[] = {Delimiter::kAuto, Delimiter::kWhitespace, Delimiter::kComma, Delimiter::kTab};
  const Delimiter delim = kDelims[data[0] % 4];
  const std::string line(reinterpret_cast<const char*>(data + 1), size - 1);
  (void)IsBlankOrComment(line);
  (void)DetectDelimiter(line);
  std::vector<std::string_view> fields;
  SplitFields(line, delim, &fields);
  // Quoted splitting: views into the line or the scratch string; without a
  // quote it must agree with SplitFields.
  std::vector<std::string_view> quoted;
  std::string scratch, error;
  const bool ok = SplitQuotedFields(line, delim, &quoted, &scratch, &error);
  fuzz::Check(ok || !error.empty(), "SplitQuotedFields failed without a reason");
  if (ok) {
    for (std::string_view f : quoted) {
      const bool in_line = f.data() >= line.data() && f.data() + f.size() <= line.data() + line.size();
      const bool in_scratch = f.data() >= scratch.data() && f.data() + f.size() <= scratch.data() + scratch.size();
      fuzz::Check(f.empty() || in_line || in_scratch, "a quoted field points outside its line and scratch");
    }
    if (line.find('"') == std::string::npos) fuzz::Check(quoted == fields, "SplitQuotedFields differs without quotes");
  }
  for (std::string_view f : fields) {
    // Views must point into the line.
    fuzz::Check(f.empty() || (f.data() >= line.data() && f.data() + f.size() <= line.data() + line.size()),
                "a field points outside its line");
    if (delim == Delimiter::kWhitespace) {
      fuzz::Check(!f.empty() && f.find_first_of(" \t") == std::string_view::npos,
                  "a whitespace-split field is empty or holds a blank");
    }
    int64_t i = 0;
    if (ParseInt64(f, &i)) {
      // Strict: the text is [+-]digits and nothing else.
      std::string_view digits = f;
      if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) digits.remove_prefix(1);
      fuzz::Check(!digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos,
                  "ParseInt64 accepted a non-integer field");
    }
    float x = 0;
    const FloatParse r = ParseFloat(f, &x);
    if (r == FloatParse::kOk) fuzz::Check(std::isfinite(x), "ParseFloat returned kOk for a non-finite value");
    (void)FloatParseReason(r);
    (void)Quote(f);
  }
  return 0;
}
