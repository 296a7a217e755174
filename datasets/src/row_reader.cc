// Rows of a text table with its header settled up front (row_reader.h).
#include "row_reader.h"

#include <cctype>

#include "foresight/core/logging.h"

namespace foresight::datasets::internal {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "id_1" / "node2" / "ID" -> "id" / "node" / "id".
std::string StripNumber(std::string_view s) {
  std::string out = Lower(s);
  while (!out.empty() && std::isdigit(static_cast<unsigned char>(out.back()))) out.pop_back();
  if (out.size() < s.size() && !out.empty() && (out.back() == '_' || out.back() == '-')) out.pop_back();
  return out;
}

bool OneOf(const std::string& s, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (s == n) return true;
  }
  return false;
}

bool EndsWithStr(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Spreadsheet exports often open with a UTF-8 byte order mark; it is no
// part of the first field.
std::string_view DropBom(std::string_view line, int64_t line_number) {
  if (line_number == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  return line;
}

}  // namespace

bool IsIdColumnName(std::string_view s) {
  const std::string n = StripNumber(s);
  return OneOf(n, {"id", "node", "node_id", "nodeid", "vertex", "source", "target", "src", "dst", "from", "to",
                   "u", "v"}) ||
         EndsWithStr(n, "_id");
}

bool IsLabelColumnName(std::string_view s) {
  const std::string n = StripNumber(s);
  return OneOf(n, {"label", "labels", "class", "target", "category", "type", "y"}) || EndsWithStr(n, "_label") ||
         EndsWithStr(n, "_class") || EndsWithStr(n, "_target") || EndsWithStr(n, "_type");
}

RowReader::RowReader(std::unique_ptr<LineReader> lines, RowReaderOptions options)
    : lines_(std::move(lines)), options_(std::move(options)) {}

StatusOr<std::unique_ptr<RowReader>> RowReader::Open(const std::string& path, RowReaderOptions options) {
  FS_ASSIGN_OR_RETURN(auto lines, LineReader::Open(path));
  std::unique_ptr<RowReader> r(new RowReader(std::move(lines), std::move(options)));
  FS_RETURN_IF_ERROR(r->Settle());
  return r;
}

Status RowReader::Error(const std::string& reason) const {
  return InvalidArgument(path() + ":" + std::to_string(line_) + ": " + reason);
}

bool RowReader::ReadAhead(Pending* into) {
  std::string_view line;
  while (lines_->Next(&line)) {
    line = DropBom(line, lines_->line_number());
    if (IsBlankOrComment(line)) continue;
    into->text.assign(line.data(), line.size());
    into->line = lines_->line_number();
    if (delim_ == Delimiter::kAuto) {
      delim_ = DetectDelimiter(into->text);
      if (options_.blanks_mix && delim_ != Delimiter::kComma) delim_ = Delimiter::kWhitespace;
    }
    std::string error;
    if (!SplitQuotedFields(into->text, delim_, &into->fields, &into->unquoted, &error)) {
      line_ = into->line;
      status_ = Error(error);
      return false;
    }
    return true;
  }
  status_ = lines_->status();
  return false;
}

Status RowReader::Settle() {
  if (options_.header == HeaderMode::kAbsent) return Status::OK();
  if (!ReadAhead(&ahead_[0])) return status_;
  num_ahead_ = 1;
  bool header = options_.header == HeaderMode::kPresent;
  std::string why;
  if (!header) {
    const bool has_second = ReadAhead(&ahead_[1]);
    FS_RETURN_IF_ERROR(status_);
    if (has_second) num_ahead_ = 2;
    const HeaderVerdict v = options_.test(ahead_[0].fields, has_second ? &ahead_[1].fields : nullptr);
    if (!v.error.empty()) {
      line_ = ahead_[0].line;
      return Error(v.error);
    }
    header = v.header;
    why = v.why;
  }
  const std::string where = path() + ":" + std::to_string(ahead_[0].line) + ": ";
  if (header) {
    for (std::string_view f : ahead_[0].fields) header_.emplace_back(f);
    header_line_ = ahead_[0].line;
    next_ahead_ = 1;
    if (options_.header == HeaderMode::kAuto) {
      FS_LOG(INFO) << where << "skipped header line " << Quote(ahead_[0].text) << " of the " << options_.role << " ("
                   << why << "); pass --no-header to read it as data";
    }
  } else if (!why.empty()) {
    FS_LOG(INFO) << where << "read the first line " << Quote(ahead_[0].text) << " of the " << options_.role
                 << " as data (" << why << "); pass --header if it is a header";
  }
  return Status::OK();
}

bool RowReader::Next() {
  if (next_ahead_ < num_ahead_) {
    Pending& p = ahead_[next_ahead_++];
    fields_ = &p.fields;
    line_ = p.line;
    ++rows_;
    return true;
  }
  if (!status_.ok()) return false;
  std::string_view line;
  while (lines_->Next(&line)) {
    line = DropBom(line, lines_->line_number());
    if (IsBlankOrComment(line)) continue;
    line_ = lines_->line_number();
    if (delim_ == Delimiter::kAuto) {
      delim_ = DetectDelimiter(line);
      if (options_.blanks_mix && delim_ != Delimiter::kComma) delim_ = Delimiter::kWhitespace;
    }
    std::string error;
    if (!SplitQuotedFields(line, delim_, &row_, &unquoted_, &error)) {
      status_ = Error(error);
      return false;
    }
    fields_ = &row_;
    ++rows_;
    return true;
  }
  status_ = lines_->status();
  return false;
}

}  // namespace foresight::datasets::internal
