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

// SplitFields with RFC 4180 quoting for comma and tab files, as spreadsheets
// and pandas write them: a field whose first non-space character is '"'
// runs to the matching '"', separators inside it are data and '""' stands
// for one '"' (the quoted text keeps its spaces). A '"' inside an unquoted
// field is data. Whitespace-delimited lines split as SplitFields does.
// Views point into `line` or into *unquoted, which is rewritten (its
// capacity reserved up front, so the views stay valid until its next use).
// Returns false and sets *error ("unterminated quoted field in column 3")
// for a quote that never closes on this line or text after a closing quote;
// *fields is then unspecified. Quoted fields cannot span lines.
bool SplitQuotedFields(std::string_view line, Delimiter delim, std::vector<std::string_view>* fields,
                       std::string* unquoted, std::string* error);

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
