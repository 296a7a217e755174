#include "foresight/core/utf8.h"

#include <cstdio>

namespace foresight {

namespace {

// Length of a well-formed sequence starting at text[i], or 0 when the
// sequence there is invalid. Table 3-7 of the Unicode standard: the second
// byte's range depends on the lead byte (this rules out overlong forms,
// surrogates and code points above U+10FFFF); further bytes are 80..BF.
size_t SequenceLength(std::string_view text, size_t i) {
  const auto at = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b0 = at(i);
  if (b0 < 0x80) return 1;
  size_t len = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;  // a continuation byte, C0/C1 (overlong) or F5..FF
  }
  if (text.size() - i < len) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  }
  return len;
}

}  // namespace

std::optional<Utf8Error> FindInvalidUtf8(std::string_view text) {
  int64_t line = 1;
  size_t line_start = 0;
  size_t i = 0;
  while (i < text.size()) {
    const size_t len = SequenceLength(text, i);
    if (len == 0) {
      Utf8Error e;
      e.offset = i;
      e.line = line;
      e.column = static_cast<int64_t>(i - line_start) + 1;
      e.byte = static_cast<uint8_t>(text[i]);
      return e;
    }
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
    i += len;
  }
  return std::nullopt;
}

Status CheckUtf8(std::string_view text, const std::string& origin) {
  const std::optional<Utf8Error> e = FindInvalidUtf8(text);
  if (!e) return Status::OK();
  char byte[8];
  std::snprintf(byte, sizeof(byte), "0x%02X", e->byte);
  return InvalidArgument(origin + ":" + std::to_string(e->line) + ":" + std::to_string(e->column) +
                         ": invalid UTF-8 (byte " + byte + " at byte offset " + std::to_string(e->offset) +
                         "); the file must be UTF-8 text");
}

}  // namespace foresight
