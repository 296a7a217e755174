#include "cli_values.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace foresight::apps {

StatusOr<size_t> ParseByteSize(const std::string& text, const std::string& flag) {
  const Status bad = InvalidArgument(flag + ": expected a byte size such as 512M, 4G or 1073741824, got '" +
                                     text + "'");
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) return bad;
  std::string suffix = text.substr(i);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (suffix.empty() || suffix == "B") {
    scale = 1;
  } else {
    const std::string units = "KMGT";
    const size_t p = units.find(suffix[0]);
    const std::string rest = suffix.substr(1);
    if (p == std::string::npos || !(rest.empty() || rest == "B" || rest == "IB")) return bad;
    scale = std::pow(1024.0, static_cast<double>(p + 1));
  }
  const std::string number = text.substr(0, i);
  if (suffix.empty() && number.find('.') != std::string::npos) return bad;  // "1.5" bytes
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (errno != 0 || end != number.c_str() + number.size()) return bad;
  const double bytes = v * scale;
  if (!(bytes >= 1) || bytes > 9.0e18) {
    return InvalidArgument(flag + ": byte size '" + text + "' is out of range (at least 1 byte)");
  }
  return static_cast<size_t>(bytes);
}

StatusOr<std::vector<double>> ParseNumberList(const std::string& text, size_t count,
                                              const std::string& flag) {
  std::vector<double> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(part.c_str(), &end);
    if (part.empty() || errno != 0 || end != part.c_str() + part.size() || !std::isfinite(v)) {
      return InvalidArgument(flag + ": expected " + std::to_string(count) +
                             " comma-separated numbers, got '" + text + "'");
    }
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.size() != count) {
    return InvalidArgument(flag + ": expected " + std::to_string(count) +
                           " comma-separated numbers, got " + std::to_string(out.size()) +
                           " in '" + text + "'");
  }
  return out;
}

}  // namespace foresight::apps
