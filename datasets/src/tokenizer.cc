// Field splitting and strict number parsing for text inputs.
#include "foresight/datasets/tokenizer.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

namespace foresight::datasets {
namespace {

inline bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoreCase(std::string_view a, const char* b) {
  const size_t n = strlen(b);
  if (a.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}

}  // namespace

bool IsBlankOrComment(std::string_view line) {
  for (char c : line) {
    if (IsSpace(c)) continue;
    return c == '#' || c == '%';
  }
  return true;
}

Delimiter DetectDelimiter(std::string_view line) {
  if (line.find('\t') != std::string_view::npos) return Delimiter::kTab;
  if (line.find(',') != std::string_view::npos) return Delimiter::kComma;
  return Delimiter::kWhitespace;
}

void SplitFields(std::string_view line, Delimiter delim, std::vector<std::string_view>* fields) {
  fields->clear();
  if (delim == Delimiter::kAuto) delim = DetectDelimiter(line);
  if (delim == Delimiter::kWhitespace) {
    size_t i = 0;
    const size_t n = line.size();
    while (i < n) {
      while (i < n && IsSpace(line[i])) ++i;
      if (i == n) break;
      const size_t b = i;
      while (i < n && !IsSpace(line[i])) ++i;
      fields->push_back(line.substr(b, i - b));
    }
    return;
  }
  const char sep = delim == Delimiter::kComma ? ',' : '\t';
  // A line that is only a trailing '\r' or spaces has no fields.
  if (Trim(line).empty()) return;
  size_t b = 0;
  while (true) {
    const size_t e = line.find(sep, b);
    if (e == std::string_view::npos) {
      fields->push_back(Trim(line.substr(b)));
      return;
    }
    fields->push_back(Trim(line.substr(b, e - b)));
    b = e + 1;
  }
}

bool SplitQuotedFields(std::string_view line, Delimiter delim, std::vector<std::string_view>* fields,
                       std::string* unquoted, std::string* error) {
  if (delim == Delimiter::kAuto) delim = DetectDelimiter(line);
  if (delim == Delimiter::kWhitespace || line.find('"') == std::string_view::npos) {
    SplitFields(line, delim, fields);
    return true;
  }
  fields->clear();
  if (Trim(line).empty()) return true;
  const char sep = delim == Delimiter::kComma ? ',' : '\t';
  unquoted->clear();
  unquoted->reserve(line.size());  // never reallocates below: earlier views stay valid
  const size_t n = line.size();
  size_t i = 0;
  while (true) {
    size_t b = i;
    while (b < n && line[b] != sep && IsSpace(line[b])) ++b;
    if (b < n && line[b] == '"') {
      const size_t start = unquoted->size();
      size_t k = b + 1;
      while (true) {
        if (k >= n) {
          *error = "unterminated quoted field in column " + std::to_string(fields->size() + 1) +
                   " (a quoted field must close on the same line)";
          return false;
        }
        if (line[k] == '"') {
          if (k + 1 < n && line[k + 1] == '"') {
            unquoted->push_back('"');
            k += 2;
            continue;
          }
          ++k;
          break;
        }
        unquoted->push_back(line[k++]);
      }
      fields->push_back(std::string_view(unquoted->data() + start, unquoted->size() - start));
      while (k < n && line[k] != sep && IsSpace(line[k])) ++k;
      if (k == n) return true;
      if (line[k] != sep) {
        *error = "text after the closing quote in column " + std::to_string(fields->size()) +
                 " (write a quote inside a quoted field as \"\")";
        return false;
      }
      i = k + 1;
      continue;
    }
    const size_t e = line.find(sep, i);
    if (e == std::string_view::npos) {
      fields->push_back(Trim(line.substr(i)));
      return true;
    }
    fields->push_back(Trim(line.substr(i, e - i)));
    i = e + 1;
  }
}

bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+') {
    ++b;
    if (b == e || *b == '-') return false;
  }
  auto [p, ec] = std::from_chars(b, e, *out);
  return ec == std::errc() && p == e;
}

FloatParse ParseFloat(std::string_view s, float* out) {
  if (s.empty()) return FloatParse::kInvalid;
  std::string_view body = s;
  if (body.front() == '+' || body.front() == '-') body.remove_prefix(1);
  if (EqualsIgnoreCase(body, "nan") || EqualsIgnoreCase(body, "-nan")) return FloatParse::kNaN;
  if (EqualsIgnoreCase(body, "inf") || EqualsIgnoreCase(body, "infinity")) return FloatParse::kInf;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (*b == '+') ++b;
  float v = 0;
  auto [p, ec] = std::from_chars(b, e, v, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) {
    // Underflow to a denormal/zero is harmless; overflow is not.
    double d = 0;
    auto [p2, ec2] = std::from_chars(b, e, d, std::chars_format::general);
    if (ec2 == std::errc() && p2 == e && std::fabs(d) < 1.0) {
      *out = static_cast<float>(d);
      return FloatParse::kOk;
    }
    return FloatParse::kOutOfRange;
  }
  if (ec != std::errc() || p != e) return FloatParse::kInvalid;
  if (std::isnan(v)) return FloatParse::kNaN;
  if (std::isinf(v)) return FloatParse::kInf;
  *out = v;
  return FloatParse::kOk;
}

const char* FloatParseReason(FloatParse r) {
  switch (r) {
    case FloatParse::kOk: return "ok";
    case FloatParse::kInvalid: return "not a number";
    case FloatParse::kNaN: return "NaN";
    case FloatParse::kInf: return "infinite";
    case FloatParse::kOutOfRange: return "out of float range";
  }
  return "invalid";
}

std::string Quote(std::string_view s) {
  if (s.size() <= 40) return "'" + std::string(s) + "'";
  return "'" + std::string(s.substr(0, 37)) + "...'";
}

}  // namespace foresight::datasets
