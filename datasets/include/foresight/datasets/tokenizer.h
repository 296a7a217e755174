// Splitting text lines into fields and parsing them strictly: integers with
// std::from_chars over the whole field (no "12abc", no "1.0"), floats with
// NaN / infinity reported separately so callers can reject them by name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace foresight::datasets {

enum class Delimiter {
  kAuto,        // tab if the line has one, else comma if it has one, else whitespace
  kWhitespace,  // runs of spaces / tabs
  kComma,       // ',' (fields trimmed of spaces)
  kTab,         // '\t' (fields trimmed of spaces)
};

// True for an empty / all-space line or one whose first non-space character
// is '#' or '%' (comments in SNAP, Matrix Market and LINQS-style files).
bool IsBlankOrComment(std::string_view line);

// The delimiter kAuto resolves to for `line`.
Delimiter DetectDelimiter(std::string_view line);

// Splits `line` into `fields` (cleared first). Views point into `line`.
void SplitFields(std::string_view line, Delimiter delim, std::vector<std::string_view>* fields);

// Strict base-10 integer: optional '+' or '-', digits, nothing else.
bool ParseInt64(std::string_view s, int64_t* out);

enum class FloatParse { kOk, kInvalid, kNaN, kInf, kOutOfRange };
// Strict float (decimal or scientific). NaN / inf spellings are recognised
// and reported, not accepted; *out is set only for kOk.
FloatParse ParseFloat(std::string_view s, float* out);
// "not a number", "NaN", "infinite", "out of float range", "invalid".
const char* FloatParseReason(FloatParse r);

// Shortens a field for an error message ("'abc'", or a prefix and "...").
std::string Quote(std::string_view s);

}  // namespace foresight::datasets
