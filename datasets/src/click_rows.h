// Click-log rows (private to foresight_datasets): the column layout of a
// Criteo or CSV log, strict parsing of one line into label, dense values and
// categorical values, and a reader that walks a list of files skipping CSV
// headers and (optionally) bad rows.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/datasets/clicks.h"
#include "foresight/datasets/tokenizer.h"

namespace foresight::datasets::internal {

// Which input column holds what.
struct ClickSchema {
  Delimiter delimiter = Delimiter::kTab;
  std::vector<std::string> columns;  // names of all columns, in file order
  int64_t label_column = 0;
  std::vector<int64_t> dense_columns;  // indexes into columns
  std::vector<int64_t> cat_columns;
  // Criteo's dense fields are integers ("non-numeric integer field" is a bad
  // row); CSV dense columns accept any finite number.
  bool integer_dense = true;
  // A first line equal to this is a header (csv); empty: never.
  std::string header;

  std::vector<std::string> DenseNames() const;
  std::vector<std::string> CatNames() const;
};

// The schema the options describe; InvalidArgument naming the flag and the
// column for a name not in --columns, a column named twice, and so on.
StatusOr<ClickSchema> MakeClickSchema(const ClickPreprocessOptions& options);

// One parsed row. Views point into the line.
struct ClickRow {
  uint8_t label = 0;
  std::vector<float> dense;            // log(1 + max(x, 0)); missing = 0
  std::vector<std::string_view> cats;  // "" = missing
};

// Parses `line`; on a malformed row returns false with *why set to what was
// expected ("expected 40 tab-separated fields, got 39").
bool ParseClickRow(const ClickSchema& schema, std::string_view line, std::vector<std::string_view>* scratch,
                   ClickRow* row, std::string* why);

// Walks `files` in order, calling on_row(file index, row) for every good row.
// A header line (schema.header) first in a file is skipped; a file with no
// rows is an error; a bad row is an error "<file>:<line>: <why>" unless
// skip_bad_rows, which counts it in *bad_rows.
// `label` names the pass in the progress display.
Status ForEachClickRow(const std::string& label, const ClickSchema& schema, const std::vector<std::string>& files,
                       bool skip_bad_rows, const std::function<Status(size_t file, const ClickRow& row)>& on_row,
                       int64_t* bad_rows, int64_t* header_lines);

}  // namespace foresight::datasets::internal
