// Click-log row layout and parsing (click_rows.h).
#include "click_rows.h"

#include <cmath>
#include <map>
#include <set>

#include "foresight/core/progress.h"
#include "foresight/datasets/line_reader.h"

namespace foresight::datasets::internal {
namespace {

constexpr int kCriteoDense = 13;
constexpr int kCriteoCategorical = 26;

std::string Join(const std::vector<std::string>& names, char sep) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += sep;
    s += names[i];
  }
  return s;
}

const char* DelimiterName(Delimiter d) { return d == Delimiter::kTab ? "tab" : "comma"; }

// log(1 + x) for x > 0, else 0: Criteo's usual dense transform (counts are
// heavy-tailed; negatives are rare and meaningless).
float LogTransform(double x) { return x > 0 ? static_cast<float>(std::log1p(x)) : 0.0f; }

}  // namespace

std::vector<std::string> ClickSchema::DenseNames() const {
  std::vector<std::string> out;
  for (int64_t c : dense_columns) out.push_back(columns[static_cast<size_t>(c)]);
  return out;
}

std::vector<std::string> ClickSchema::CatNames() const {
  std::vector<std::string> out;
  for (int64_t c : cat_columns) out.push_back(columns[static_cast<size_t>(c)]);
  return out;
}

StatusOr<ClickSchema> MakeClickSchema(const ClickPreprocessOptions& o) {
  ClickSchema s;
  const std::string& d = o.delimiter;
  if (!d.empty() && d != "tab" && d != "comma") {
    return InvalidArgument("--delimiter must be \"tab\" or \"comma\", got \"" + d + "\"");
  }
  if (o.format == ClickFormat::kCriteo) {
    if (!o.columns.empty() || !o.label.empty() || !o.dense.empty() || !o.categorical.empty() || !o.drop.empty()) {
      return InvalidArgument(
          "--columns, --label, --dense, --categorical and --drop are for --format csv; --format criteo has "
          "the fixed layout label, I1..I13, C1..C26");
    }
    s.delimiter = d == "comma" ? Delimiter::kComma : Delimiter::kTab;
    s.columns.push_back("label");
    s.label_column = 0;
    for (int i = 1; i <= kCriteoDense; ++i) {
      s.dense_columns.push_back(static_cast<int64_t>(s.columns.size()));
      s.columns.push_back("I" + std::to_string(i));
    }
    for (int i = 1; i <= kCriteoCategorical; ++i) {
      s.cat_columns.push_back(static_cast<int64_t>(s.columns.size()));
      s.columns.push_back("C" + std::to_string(i));
    }
    s.integer_dense = true;
    return s;
  }

  s.delimiter = d == "tab" ? Delimiter::kTab : Delimiter::kComma;
  s.integer_dense = false;
  if (o.columns.empty()) return InvalidArgument("--format csv needs --columns a,b,c,... (the names of every column)");
  std::map<std::string, int64_t> index;
  for (size_t i = 0; i < o.columns.size(); ++i) {
    const std::string& c = o.columns[i];
    if (c.empty()) return InvalidArgument("--columns: column " + std::to_string(i + 1) + " has an empty name");
    if (!index.emplace(c, static_cast<int64_t>(i)).second) {
      return InvalidArgument("--columns names \"" + c + "\" twice");
    }
  }
  s.columns = o.columns;
  s.header = Join(o.columns, s.delimiter == Delimiter::kTab ? '\t' : ',');
  const std::string all = Join(o.columns, ',');
  std::map<int64_t, std::string> role;  // column -> the flag that claimed it
  auto claim = [&](const std::string& flag, const std::string& name, std::vector<int64_t>* out) -> Status {
    auto it = index.find(name);
    if (it == index.end()) {
      return InvalidArgument(flag + " names column \"" + name + "\", which is not in --columns (" + all + ")");
    }
    auto [r, inserted] = role.emplace(it->second, flag);
    if (!inserted) {
      return InvalidArgument("column \"" + name + "\" is named by both " + r->second + " and " + flag);
    }
    if (out != nullptr) out->push_back(it->second);
    return Status::OK();
  };
  if (o.label.empty()) return InvalidArgument("--format csv needs --label COL");
  std::vector<int64_t> label;
  FS_RETURN_IF_ERROR(claim("--label", o.label, &label));
  s.label_column = label[0];
  for (const std::string& c : o.drop) FS_RETURN_IF_ERROR(claim("--drop", c, nullptr));
  for (const std::string& c : o.dense) FS_RETURN_IF_ERROR(claim("--dense", c, &s.dense_columns));
  if (!o.categorical.empty()) {
    for (const std::string& c : o.categorical) FS_RETURN_IF_ERROR(claim("--categorical", c, &s.cat_columns));
    std::string unassigned;
    for (size_t i = 0; i < o.columns.size(); ++i) {
      if (role.count(static_cast<int64_t>(i)) == 0) unassigned += (unassigned.empty() ? "" : ",") + o.columns[i];
    }
    if (!unassigned.empty()) {
      return InvalidArgument("columns " + unassigned +
                             " are named by none of --label, --dense, --categorical, --drop (list them in "
                             "--drop to ignore them)");
    }
  } else {
    // Every column not otherwise named is categorical (Avazu: all but id and click).
    for (size_t i = 0; i < o.columns.size(); ++i) {
      if (role.count(static_cast<int64_t>(i)) == 0) s.cat_columns.push_back(static_cast<int64_t>(i));
    }
  }
  if (s.cat_columns.empty() && s.dense_columns.empty()) {
    return InvalidArgument("--format csv: no dense or categorical columns left");
  }
  if (s.cat_columns.size() > 65535) {  // ClickVocabulary keys carry the field in 2 bytes
    return InvalidArgument("--format csv: at most 65535 categorical columns, got " +
                           std::to_string(s.cat_columns.size()));
  }
  return s;
}

bool ParseClickRow(const ClickSchema& s, std::string_view line, std::vector<std::string_view>* fields, ClickRow* row,
                   std::string* why) {
  SplitFields(line, s.delimiter, fields);
  if (fields->size() != s.columns.size()) {
    *why = "expected " + std::to_string(s.columns.size()) + " " + DelimiterName(s.delimiter) +
           "-separated fields, got " + std::to_string(fields->size());
    return false;
  }
  const std::string_view label = (*fields)[static_cast<size_t>(s.label_column)];
  if (label != "0" && label != "1") {
    *why = "label (column " + std::to_string(s.label_column + 1) + ", " +
           s.columns[static_cast<size_t>(s.label_column)] + ") must be 0 or 1, got " + Quote(label);
    return false;
  }
  row->label = label == "1" ? 1 : 0;
  row->dense.resize(s.dense_columns.size());
  for (size_t j = 0; j < s.dense_columns.size(); ++j) {
    const size_t c = static_cast<size_t>(s.dense_columns[j]);
    const std::string_view f = (*fields)[c];
    if (f.empty()) {
      row->dense[j] = 0.0f;
      continue;
    }
    if (s.integer_dense) {
      int64_t v = 0;
      if (!ParseInt64(f, &v)) {
        *why =
            "column " + std::to_string(c + 1) + " (" + s.columns[c] + ") must be an integer or empty, got " + Quote(f);
        return false;
      }
      row->dense[j] = LogTransform(static_cast<double>(v));
    } else {
      float v = 0;
      const FloatParse r = ParseFloat(f, &v);
      if (r != FloatParse::kOk) {
        *why = "column " + std::to_string(c + 1) + " (" + s.columns[c] + ") must be a finite number or empty, got " +
               Quote(f) + " (" + FloatParseReason(r) + ")";
        return false;
      }
      row->dense[j] = LogTransform(v);
    }
  }
  row->cats.resize(s.cat_columns.size());
  for (size_t j = 0; j < s.cat_columns.size(); ++j) row->cats[j] = (*fields)[static_cast<size_t>(s.cat_columns[j])];
  return true;
}

Status ForEachClickRow(const std::string& label, const ClickSchema& schema, const std::vector<std::string>& files,
                       bool skip_bad_rows, const std::function<Status(size_t file, const ClickRow& row)>& on_row,
                       int64_t* bad_rows, int64_t* header_lines) {
  std::vector<std::string_view> fields;
  ClickRow row;
  std::string why;
  ProgressOptions po;
  po.unit = "rows";
  Progress progress(label, 0, po);
  for (size_t fi = 0; fi < files.size(); ++fi) {
    FS_ASSIGN_OR_RETURN(std::unique_ptr<LineReader> reader, LineReader::Open(files[fi]));
    std::string_view line;
    int64_t rows = 0;
    while (reader->Next(&line)) {
      if (reader->line_number() == 1 && !schema.header.empty() && line == schema.header) {
        if (header_lines != nullptr) ++*header_lines;
        continue;
      }
      if (!ParseClickRow(schema, line, &fields, &row, &why)) {
        if (!skip_bad_rows) return reader->Error(why + " (pass --skip-bad-rows to skip such rows)");
        ++*bad_rows;
        continue;
      }
      ++rows;
      FS_RETURN_IF_ERROR(on_row(fi, row));
      progress.Advance();
    }
    FS_RETURN_IF_ERROR(reader->status());
    if (rows == 0) {
      return InvalidArgument(files[fi] + ": no rows (expected at least one " + DelimiterName(schema.delimiter) +
                             "-separated line of " + std::to_string(schema.columns.size()) + " fields" +
                             (*bad_rows > 0 ? "; its bad rows were skipped" : "") + ")");
    }
  }
  progress.Finish(std::to_string(*bad_rows) + " bad rows skipped");
  return Status::OK();
}

}  // namespace foresight::datasets::internal
