#include "npy_format.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>

namespace foresight::storage::internal {
namespace {

// A tiny scanner for the Python-literal dict numpy writes. Only the subset
// numpy produces for simple dtypes is accepted; anything else is an error.
class DictScanner {
 public:
  DictScanner(const std::string& s, const std::string& path) : s_(s), path_(path) {}

  void SkipSpace() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (i_ < s_.size() && s_[i_] == c) { ++i_; return true; }
    return false;
  }
  bool ConsumeWord(const char* w) {
    SkipSpace();
    const size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) == 0) { i_ += n; return true; }
    return false;
  }
  bool PeekQuote() {
    SkipSpace();
    return i_ < s_.size() && (s_[i_] == '\'' || s_[i_] == '"');
  }
  Status Expect(char c) {
    if (Consume(c)) return Status::OK();
    return Error(std::string("expected '") + c + "'");
  }
  Status String(std::string* out) {
    SkipSpace();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return Error("expected a string");
    const char q = s_[i_++];
    const size_t end = s_.find(q, i_);
    if (end == std::string::npos) return Error("unterminated string");
    *out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return Status::OK();
  }
  Status Int(int64_t* out) {
    SkipSpace();
    const size_t start = i_;
    int64_t v = 0;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
      const int d = s_[i_] - '0';
      if (v > (std::numeric_limits<int64_t>::max() - d) / 10) return Error("dimension overflows int64");
      v = v * 10 + d;
      ++i_;
    }
    if (i_ == start) return Error("expected a non-negative integer dimension");
    if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 long suffix
    *out = v;
    return Status::OK();
  }
  Status Error(const std::string& what) const {
    return DataLoss(path_ + ": malformed .npy header at character " + std::to_string(i_) + ": " +
                    what + " (header: " + s_.substr(0, 200) + ")");
  }

 private:
  const std::string& s_;
  const std::string& path_;
  size_t i_ = 0;
};

Status ParseDescr(const std::string& descr, const std::string& path, NpyInfo* info) {
  info->is_bytes = false;
  if (descr == "<f4") { info->dtype = DType::kF32; info->item_size = 4; return Status::OK(); }
  if (descr == "<f2") { info->dtype = DType::kF16; info->item_size = 2; return Status::OK(); }
  if (descr == "<i4") { info->dtype = DType::kI32; info->item_size = 4; return Status::OK(); }
  if (descr == "<i8") { info->dtype = DType::kI64; info->item_size = 8; return Status::OK(); }
  if (descr == "|u1" || descr == "<u1" || descr == "|b1" || descr == "<b1") {
    info->dtype = DType::kU8;
    info->item_size = 1;
    return Status::OK();
  }
  if (descr.size() >= 3 && (descr[0] == '|' || descr[0] == '<') && descr[1] == 'S') {
    int64_t w = 0;
    bool digits = true;
    for (size_t k = 2; k < descr.size(); ++k) {
      if (!std::isdigit(static_cast<unsigned char>(descr[k])) || w > (1 << 30)) { digits = false; break; }
      w = w * 10 + (descr[k] - '0');
    }
    if (digits && w > 0) {
      info->dtype = DType::kU8;
      info->item_size = static_cast<size_t>(w);
      info->is_bytes = true;
      return Status::OK();
    }
  }
  if (!descr.empty() && descr[0] == '>') {
    return Unimplemented(path + ": big-endian .npy dtype '" + descr +
                         "' is not supported (save with arr.astype(arr.dtype.newbyteorder('<')))");
  }
  return Unimplemented(path + ": .npy dtype '" + descr +
                       "' is not supported (expected <f4, <f2, <i4, <i8, |u1, |b1 or |S<n>)");
}

}  // namespace

bool CheckedDataBytes(const Shape& shape, size_t item_size, size_t* out) {
  size_t n = item_size;
  // Tensor strides multiply the dimensions with zeros counted as 1, so an
  // empty array whose other dimensions overflow int64 is refused too.
  int64_t span = static_cast<int64_t>(std::max<size_t>(item_size, 1));
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && n > std::numeric_limits<size_t>::max() / static_cast<size_t>(d)) return false;
    n *= static_cast<size_t>(d);
    if (d > 1 && span > std::numeric_limits<int64_t>::max() / d) return false;
    span *= std::max<int64_t>(d, 1);
  }
  *out = n;
  return true;
}

Status ParseNpyHeaderDict(const std::string& text, const std::string& path, NpyInfo* info) {
  DictScanner sc(text, path);
  FS_RETURN_IF_ERROR(sc.Expect('{'));
  bool have_descr = false, have_order = false, have_shape = false;
  std::string descr;
  while (!sc.Consume('}')) {
    std::string key;
    FS_RETURN_IF_ERROR(sc.String(&key));
    FS_RETURN_IF_ERROR(sc.Expect(':'));
    if (key == "descr") {
      if (!sc.PeekQuote()) {
        return Unimplemented(path + ": structured .npy dtypes are not supported "
                             "(descr is not a simple type string)");
      }
      FS_RETURN_IF_ERROR(sc.String(&descr));
      have_descr = true;
    } else if (key == "fortran_order") {
      if (sc.ConsumeWord("True")) {
        return Unimplemented(path + ": Fortran-order (column-major) .npy arrays are not supported; "
                             "save with np.ascontiguousarray(arr)");
      }
      if (!sc.ConsumeWord("False")) return sc.Error("fortran_order must be True or False");
      have_order = true;
    } else if (key == "shape") {
      FS_RETURN_IF_ERROR(sc.Expect('('));
      info->shape.clear();
      while (!sc.Consume(')')) {
        int64_t d;
        FS_RETURN_IF_ERROR(sc.Int(&d));
        info->shape.push_back(d);
        if (!sc.Consume(',')) {
          FS_RETURN_IF_ERROR(sc.Expect(')'));
          break;
        }
      }
      have_shape = true;
    } else {
      return sc.Error("unexpected key '" + key + "'");
    }
    if (!sc.Consume(',')) {
      FS_RETURN_IF_ERROR(sc.Expect('}'));
      break;
    }
  }
  if (!have_descr) return sc.Error("missing 'descr'");
  if (!have_order) return sc.Error("missing 'fortran_order'");
  if (!have_shape) return sc.Error("missing 'shape'");
  return ParseDescr(descr, path, info);
}

namespace {

std::string HeaderDict(const std::string& descr, const Shape& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t k = 0; k < shape.size(); ++k) {
    if (k > 0) dict += ", ";
    dict += std::to_string(shape[k]);
  }
  if (shape.size() == 1) dict += ",";
  dict += "), }";
  return dict;
}

}  // namespace

size_t NpyHeaderTextSize(const std::string& descr, const Shape& shape) {
  return 10 + HeaderDict(descr, shape).size() + 1;  // magic+version+len, dict, '\n'
}

StatusOr<std::string> BuildNpyHeaderOfSize(const std::string& descr, const Shape& shape,
                                           size_t total_bytes) {
  const std::string dict = HeaderDict(descr, shape);
  const size_t min_total = 10 + dict.size() + 1;  // magic+version+len, dict, '\n'
  if (total_bytes < min_total || total_bytes - 10 > 65535) {
    return Internal("npy header of " + std::to_string(min_total) + " bytes does not fit in " +
                    std::to_string(total_bytes) + " (shape " + ShapeToString(shape) + ")");
  }
  std::string h;
  h.reserve(total_bytes);
  h.append("\x93NUMPY", 6);
  h.push_back('\x01');
  h.push_back('\x00');
  const size_t hlen = total_bytes - 10;
  h.push_back(static_cast<char>(hlen & 0xff));
  h.push_back(static_cast<char>((hlen >> 8) & 0xff));
  h += dict;
  h.append(total_bytes - 1 - h.size(), ' ');
  h.push_back('\n');
  return h;
}

}  // namespace foresight::storage::internal
