// Reading raw input files as users hand them over: plain, gzip or xz, chosen
// by the file's magic bytes (not its name). ByteReader yields decompressed
// bytes; LineReader splits them into lines and counts line numbers so every
// parse error can say "<path>:<line>: <reason>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::datasets {

enum class Compression { kNone, kGzip, kXz };
const char* CompressionName(Compression c);  // "none", "gzip", "xz"

// Decompressing sequential reader. Not thread-safe.
class ByteReader {
 public:
  // NotFound when `path` is absent; IoError for other open failures.
  static StatusOr<std::unique_ptr<ByteReader>> Open(const std::string& path);
  virtual ~ByteReader() = default;
  // Reads up to `n` decompressed bytes; returns 0 only at the end of the
  // data. A truncated or corrupt compressed stream is DataLoss naming the
  // path ("truncated (unexpected end of xz stream)").
  virtual StatusOr<size_t> Read(char* buf, size_t n) = 0;
  Compression compression() const { return compression_; }
  const std::string& path() const { return path_; }

 protected:
  ByteReader(std::string path, Compression c) : path_(std::move(path)), compression_(c) {}
  std::string path_;
  Compression compression_;
};

// Splits a ByteReader's output into lines ('\n', with a trailing '\r'
// removed). Not thread-safe.
class LineReader {
 public:
  static StatusOr<std::unique_ptr<LineReader>> Open(const std::string& path);

  // Sets *line to the next line (valid until the next call) and returns
  // true; false at the end of the file or on an error: check status().
  bool Next(std::string_view* line);
  const Status& status() const { return status_; }
  // 1-based number of the line last returned.
  int64_t line_number() const { return line_number_; }
  const std::string& path() const { return bytes_->path(); }
  Compression compression() const { return bytes_->compression(); }
  // "<path>:<line>: <reason>" for the line last returned.
  std::string Where() const;
  Status Error(const std::string& reason) const;  // InvalidArgument(Where() + reason)

 private:
  explicit LineReader(std::unique_ptr<ByteReader> bytes);
  bool Fill();

  std::unique_ptr<ByteReader> bytes_;
  std::vector<char> buf_;
  size_t begin_ = 0;  // first unconsumed byte in buf_
  size_t end_ = 0;    // one past the last valid byte in buf_
  bool eof_ = false;
  std::string carry_;  // a line that straddles buffer refills
  int64_t line_number_ = 0;
  Status status_;
};

}  // namespace foresight::datasets
