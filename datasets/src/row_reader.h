// Text tables as they are published (private to foresight_datasets): rows
// of fields from a LineReader with blank and comment lines skipped, one
// delimiter for the whole file (chosen on its first line), RFC 4180 quotes
// in comma / tab files, and an optional header line, taken or detected once
// per file. Every error names the file and the line of the row.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/datasets/line_reader.h"
#include "foresight/datasets/preprocess.h"
#include "foresight/datasets/tokenizer.h"

namespace foresight::datasets::internal {

using Row = std::vector<std::string_view>;

// What a header test decided about the first row of a file.
struct HeaderVerdict {
  bool header = false;
  // Why, for the log ("its ids are not integers"). A data verdict with a
  // reason is logged too: it says a header could not be told from data.
  std::string why;
  // Non-empty: the file cannot be read as asked (a named column missing
  // from the first line); reported at the first row's line.
  std::string error;

  static HeaderVerdict Header(std::string why) { return {true, std::move(why), ""}; }
  static HeaderVerdict Data(std::string why = "") { return {false, std::move(why), ""}; }
  static HeaderVerdict Fail(std::string error) { return {false, "", std::move(error)}; }
};

// Decides whether `first` (the first row) is a header; `second` is the
// second row, or null when the file has only one.
using HeaderTest = std::function<HeaderVerdict(const Row& first, const Row* second)>;

struct RowReaderOptions {
  // kPresent: the first row is the header. kAbsent: every row is data.
  // kAuto: `test` decides. Default: kAuto.
  HeaderMode header = HeaderMode::kAuto;
  HeaderTest test;  // required for kAuto
  // Edge files: ids hold no blanks, so tabs and spaces may mix on a line and
  // a file splits on commas (when its first line has one) or on blanks.
  // Otherwise the first line picks tab, comma or blanks. Default: false.
  bool blanks_mix = false;
  // What the file is, for the log ("edge file"). Default: "file".
  const char* role = "file";
};

// Not thread-safe.
class RowReader {
 public:
  // Opens `path` and reads up to its first two rows to settle the header.
  static StatusOr<std::unique_ptr<RowReader>> Open(const std::string& path, RowReaderOptions options);

  // Moves to the next data row (the header is never returned); false at
  // the end or on an error: check status().
  bool Next();
  // The current row's fields, valid until the next call to Next.
  const Row& fields() const { return *fields_; }
  const Status& status() const { return status_; }

  // 1-based line of the current row.
  int64_t line_number() const { return line_; }
  // InvalidArgument("<path>:<line>: <reason>") for the current row.
  Status Error(const std::string& reason) const;
  const std::string& path() const { return lines_->path(); }

  // The header's fields (empty when the file has none) and its line.
  const std::vector<std::string>& header() const { return header_; }
  int64_t header_line() const { return header_line_; }
  // Lines read so far (all of them once Next returned false), and data rows.
  int64_t lines_read() const { return lines_->line_number(); }
  int64_t rows() const { return rows_; }

 private:
  // A row read ahead while the header was settled; owns its text.
  struct Pending {
    std::string text;
    std::string unquoted;
    Row fields;
    int64_t line = 0;
  };

  RowReader(std::unique_ptr<LineReader> lines, RowReaderOptions options);
  // Reads the next non-blank, non-comment line into `into`: false at the end
  // or on an error (status_ set).
  bool ReadAhead(Pending* into);
  Status Settle();

  std::unique_ptr<LineReader> lines_;
  RowReaderOptions options_;
  Delimiter delim_ = Delimiter::kAuto;
  Pending ahead_[2];
  int next_ahead_ = 0;  // ahead_[next_ahead_ .. num_ahead_) are data rows not yet returned
  int num_ahead_ = 0;
  Row row_;
  std::string unquoted_;
  const Row* fields_ = &row_;
  int64_t line_ = 0;
  int64_t rows_ = 0;
  std::vector<std::string> header_;
  int64_t header_line_ = 0;
  Status status_;
};

// True when `s` is a conventional name of a node-id column: id, node,
// node_id, nodeid, vertex, source, target, src, dst, from, to, u, v, in any
// case and with an optional number ("id_1", "node2"). Used where ids may be
// arbitrary strings, so a header cannot be told from data by its type.
bool IsIdColumnName(std::string_view s);
// The same for label columns: label, labels, class, target, category,
// type, y (and names ending in _label, _class, _target, _type).
bool IsLabelColumnName(std::string_view s);

}  // namespace foresight::datasets::internal
