// Text label files as published: one label per row, "id label", or wider
// CSV tables (MUSAE's "id,facebook_id,page_name,page_type") with the id and
// label columns picked by name or index, a header line, RFC 4180 quotes,
// and integer class ids or class names.
#include <algorithm>
#include <map>

#include "foresight/datasets/tokenizer.h"
#include "preprocess_internal.h"
#include "row_reader.h"

namespace foresight::datasets::internal {
namespace {

// --label-column / --id-column: a header name, or a 0-based index.
struct ColumnSpec {
  const char* flag = "";
  std::string text;  // empty: not given
  bool by_name() const { return !text.empty() && text.find_first_not_of("0123456789") != std::string::npos; }
};

// Where the id and the label are on each row.
struct Layout {
  size_t columns = 0;
  int64_t id = -1;  // -1: none (row i labels node i)
  int64_t label = -1;
};

bool IsIntLabel(std::string_view s) {
  int64_t v;
  return ParseInt64(s, &v) && v >= -1;
}

std::string Join(const Row& row) {
  std::string out;
  for (std::string_view f : row) out += (out.empty() ? "" : ", ") + Quote(f);
  return out;
}

// Resolves one spec to a column of a `columns`-wide table; `header` is
// null when the file has none. Returns an error text, or "".
std::string Resolve(const ColumnSpec& spec, size_t columns, const Row* header, int64_t* out) {
  if (spec.by_name()) {
    if (header == nullptr) {
      return std::string(spec.flag) + " " + Quote(spec.text) +
             " names a column, but the file has no header line (give a 0-based index instead)";
    }
    for (size_t j = 0; j < header->size(); ++j) {
      if ((*header)[j] == spec.text) {
        // The header may be wider than the rows: the index must fit both.
        if (j >= columns) {
          return std::string("column ") + Quote(spec.text) + " (" + spec.flag + ") is column " + std::to_string(j) +
                 " of the header line, but the rows have " + std::to_string(columns) + " columns";
        }
        *out = static_cast<int64_t>(j);
        return "";
      }
    }
    return std::string("no column named ") + Quote(spec.text) + " (" + spec.flag + "); the first line has " +
           Join(*header);
  }
  int64_t j = -1;
  if (!ParseInt64(spec.text, &j) || j < 0 || static_cast<size_t>(j) >= columns) {
    return std::string(spec.flag) + " " + spec.text + " is not a column of this " + std::to_string(columns) +
           "-column file (0-based: 0.." + std::to_string(columns - 1) + ")";
  }
  *out = j;
  return "";
}

std::string ResolveLayout(const ColumnSpec& id, const ColumnSpec& label, size_t columns, const Row* header,
                          Layout* l) {
  l->columns = columns;
  l->id = -1;
  l->label = -1;
  if (!label.text.empty()) {
    std::string e = Resolve(label, columns, header, &l->label);
    if (!e.empty()) return e;
  }
  if (!id.text.empty()) {
    std::string e = Resolve(id, columns, header, &l->id);
    if (!e.empty()) return e;
  }
  if (l->label < 0) {
    if (columns > 2) {
      return std::to_string(columns) + " columns" + (header ? " (" + Join(*header) + ")" : "") +
             ": pass --label-column NAME|INDEX to pick the label column (and --id-column when the id is not "
             "the first)";
    }
    if (columns == 1) {
      l->label = 0;
    } else {
      l->label = l->id == 1 ? 0 : 1;
    }
  }
  if (l->id < 0 && id.text.empty() && columns > 1) l->id = l->label == 0 ? -1 : 0;
  if (l->id < 0 && columns > 1) {
    return "the label column is column 0, where the node id is by default: pass --id-column NAME|INDEX";
  }
  if (l->id >= 0 && l->id == l->label) return "the id column and the label column are the same column";
  return "";
}

// Whether the first row of a label file is a header (row_reader.h).
HeaderVerdict LabelHeaderTest(const ColumnSpec& id_spec, const ColumnSpec& label_spec, bool string_ids,
                              bool class_names, const Row& first, const Row* second) {
  if (id_spec.by_name() || label_spec.by_name()) {
    Layout l;
    const std::string e = ResolveLayout(id_spec, label_spec, first.size(), &first, &l);
    if (!e.empty()) return HeaderVerdict::Fail(e);
    return HeaderVerdict::Header("it holds the column names given to --label-column / --id-column");
  }
  Layout l;
  if (!ResolveLayout(id_spec, label_spec, first.size(), nullptr, &l).empty()) {
    // No label column yet (a wide file without --label-column): the id
    // column alone decides, so the error on the next row can list the
    // header's names.
    int64_t id = 0, v;
    if (!id_spec.text.empty() &&
        (!ParseInt64(id_spec.text, &id) || id < 0 || id >= static_cast<int64_t>(first.size()))) {
      return HeaderVerdict::Data();
    }
    const std::string_view token = first[static_cast<size_t>(id)];
    if (string_ids ? IsIdColumnName(token) : !ParseInt64(token, &v)) {
      return HeaderVerdict::Header("its node id " + Quote(token) + " is " +
                                   (string_ids ? "a column name" : "not an integer"));
    }
    return HeaderVerdict::Data();  // the layout error is reported on this row
  }
  if (l.id >= 0 && !string_ids) {
    int64_t v;
    if (!ParseInt64(first[l.id], &v)) {
      return HeaderVerdict::Header("its node id " + Quote(first[l.id]) + " is not an integer");
    }
    return HeaderVerdict::Data();
  }
  // Ids may be any token: only the label's type, or the names, can tell.
  if (IsIntLabel(first[l.label])) return HeaderVerdict::Data();
  if (!class_names && second != nullptr && second->size() == first.size() && IsIntLabel((*second)[l.label])) {
    return HeaderVerdict::Header("its label " + Quote(first[l.label]) + " is not an integer, unlike the next line's");
  }
  if ((l.id >= 0 && IsIdColumnName(first[l.id])) || IsLabelColumnName(first[l.label])) {
    return HeaderVerdict::Header("it holds conventional column names");
  }
  return HeaderVerdict::Data("its label " + Quote(first[l.label]) + " may be a class name, not a column name");
}

}  // namespace

Status ReadTextLabels(Job* job, const std::string& path, int64_t n, LabelFileInfo* info) {
  const PreprocessOptions& o = *job->opt;
  ColumnSpec id_spec{"--id-column", o.id_column};
  ColumnSpec label_spec{"--label-column", o.label_column};
  const bool string_ids = job->string_ids;

  RowReaderOptions ro;
  ro.header = o.header;
  ro.role = "label file";
  ro.test = [&](const Row& first, const Row* second) {
    return LabelHeaderTest(id_spec, label_spec, string_ids, o.class_names, first, second);
  };
  FS_ASSIGN_OR_RETURN(auto r, RowReader::Open(path, std::move(ro)));

  Layout l;
  enum class Kind { kUndecided, kInt, kNames };
  Kind kind = o.class_names ? Kind::kNames : Kind::kUndecided;
  int64_t first_empty_line = 0;  // an empty label met before the kind was decided
  std::map<std::string, int64_t, std::less<>> class_tmp;  // name -> first-seen index
  std::vector<std::string> tmp_names;
  auto& labels = job->labels;
  std::vector<char>& seen = info->seen;
  while (r->Next()) {
    const Row& f = r->fields();
    if (l.columns == 0) {
      Row header_row(r->header().begin(), r->header().end());
      const std::string e =
          ResolveLayout(id_spec, label_spec, f.size(), r->header().empty() ? nullptr : &header_row, &l);
      if (!e.empty()) return r->Error(e);
      if (string_ids && l.id < 0) {
        return r->Error("with --ids string, label rows need an id column (got 1 column)");
      }
      nlohmann::json desc = {{"id_column", l.id}, {"label_column", l.label}};
      if (!r->header().empty()) desc["header"] = r->header();
      job->source["label_file"] = desc;
    }
    if (f.size() != l.columns) {
      return r->Error("expected " + std::to_string(l.columns) + " columns, got " + std::to_string(f.size()));
    }
    // The label, as a class id or (kNames) as a first-seen name index.
    std::string_view v = f[static_cast<size_t>(l.label)];
    int64_t label = -1;
    if (kind == Kind::kUndecided) {
      if (v.empty()) {
        if (first_empty_line == 0) first_empty_line = r->line_number();
      } else {
        kind = IsIntLabel(v) ? Kind::kInt : Kind::kNames;
        if (kind == Kind::kInt && first_empty_line > 0) {
          return InvalidArgument(path + ":" + std::to_string(first_empty_line) +
                                 ": empty label (labels are integers here; -1 = unlabelled)");
        }
      }
    }
    if (kind == Kind::kInt) {
      if (!IsIntLabel(v)) {
        return r->Error("label " + Quote(v) + " is not an integer >= -1 (-1 = unlabelled; the first label was an "
                        "integer, so labels are class ids: pass --class-names to read them as names)");
      }
      ParseInt64(v, &label);
    } else if (kind == Kind::kNames && !v.empty()) {
      auto it = class_tmp.find(v);
      if (it == class_tmp.end()) {
        it = class_tmp.emplace(std::string(v), static_cast<int64_t>(tmp_names.size())).first;
        tmp_names.emplace_back(v);
      }
      label = it->second;
    }

    if (l.id < 0) {
      labels.push_back(label);
      continue;
    }
    std::string_view token = f[static_cast<size_t>(l.id)];
    int64_t id;
    if (string_ids) {
      id = o.allow_isolated_nodes ? job->ids.Intern(token) : job->ids.Find(token);
      if (id < 0) {
        return r->Error("node " + Quote(token) + " has a label but no edge names it; pass " +
                        "--allow-isolated-nodes to keep such nodes as isolated nodes");
      }
    } else {
      if (!ParseInt64(token, &id)) return r->Error("node id " + Quote(token) + " is not an integer");
      if (id < 0 || (n >= 0 && id >= n)) {
        return r->Error("id " + std::to_string(id) + " out of range " +
                        (n >= 0 ? "[0, " + std::to_string(n) + ")" : std::string("[0, 2^63)")));
      }
      if (id > info->max_id) {
        info->max_id = id;
        info->max_id_line = r->line_number();
      }
    }
    if (id >= static_cast<int64_t>(labels.size())) {
      labels.resize(static_cast<size_t>(id) + 1, -1);
      seen.resize(static_cast<size_t>(id) + 1, 0);
    }
    if (seen[id]) return r->Error("duplicate label for node " + Quote(token));
    seen[id] = 1;
    labels[id] = label;
  }
  FS_RETURN_IF_ERROR(r->status());
  if (r->rows() == 0) {
    return InvalidArgument(path + ": no labels (" +
                           (r->lines_read() == 0 ? std::string("the file is empty")
                                                 : "its " + std::to_string(r->lines_read()) +
                                                       " lines are blank, comments or a header") +
                           "); leave out --labels for an unlabelled graph");
  }
  info->per_row = l.id < 0;

  if (kind == Kind::kNames) {
    // Class ids in sorted name order (std::map iterates sorted), as for LINQS.
    std::vector<int64_t> remap(tmp_names.size());
    job->class_names.clear();
    for (const auto& [name, tmp] : class_tmp) {
      remap[static_cast<size_t>(tmp)] = static_cast<int64_t>(job->class_names.size());
      job->class_names.push_back(name);
    }
    for (int64_t& x : labels) {
      if (x >= 0) x = remap[static_cast<size_t>(x)];
    }
  }
  return Status::OK();
}

}  // namespace foresight::datasets::internal
