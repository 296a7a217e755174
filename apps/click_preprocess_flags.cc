// Flags of `foresight preprocess --format criteo|csv` (click_preprocess_flags.h).
#include "click_preprocess_flags.h"

#include <cstdio>

#include "cli_values.h"
#include "foresight/core/context.h"

namespace foresight::apps {
namespace {

const char* const kClickOnlyFlags[] = {
    "--train", "--val",   "--test",        "--hash-buckets", "--min-frequency", "--vocab-from",   "--columns",
    "--label", "--dense", "--categorical", "--drop",         "--delimiter",     "--skip-bad-rows"};

}  // namespace

bool ClickPreprocessFlags::Handles(const std::string& format) { return format == "criteo" || format == "csv"; }

void ClickPreprocessFlags::Add(CLI::App* app) {
  app_ = app;
  datasets::ClickPreprocessOptions& o = options_;
  app->add_option("--train", o.train, "criteo/csv: training files of a log that comes split; triples: the training triples")->type_name("FILE...");
  app->add_option("--val", o.val, "criteo/csv/triples: validation files")->type_name("FILE...");
  app->add_option("--test", o.test, "criteo/csv/triples: test files")->type_name("FILE...");
  app->add_option("--hash-buckets", o.hash_buckets,
                  "criteo/csv: hash each field's values into N rows (one pass; row 0 = missing)")
      ->type_name("N");
  app->add_option("--min-frequency", o.min_frequency,
                  "criteo/csv: vocabulary ids; values seen fewer times share row 0 (default: 1)")
      ->type_name("K");
  app->add_option("--vocab-from", vocab_from_, "criteo/csv: rows whose values are counted (default: train)")
      ->type_name("train|all");
  app->add_option("--columns", o.columns, "csv: names of every column, in file order")
      ->delimiter(',')
      ->type_name("A,B,...");
  app->add_option("--label", o.label, "csv: the 0/1 click column")->type_name("COL");
  app->add_option("--dense", o.dense, "csv: numeric columns (stored as log(1 + x))")->delimiter(',')->type_name("COLS");
  app->add_option("--categorical", o.categorical,
                  "csv: categorical columns (default: every column not named elsewhere)")
      ->delimiter(',')
      ->type_name("COLS");
  app->add_option("--drop", o.drop, "csv: columns to ignore")->delimiter(',')->type_name("COLS");
  app->add_option("--delimiter", o.delimiter, "criteo/csv: field separator (default: tab for criteo, comma for csv)")
      ->type_name("tab|comma");
  app->add_flag("--skip-bad-rows", o.skip_bad_rows, "criteo/csv: count and skip malformed rows instead of stopping");
}

bool ClickPreprocessFlags::AnyGiven() const {
  for (const char* flag : kClickOnlyFlags) {
    if (app_->count(flag) > 0) return true;
  }
  return false;
}

Status ClickPreprocessFlags::TakeSplitFiles(std::string* train, std::string* val, std::string* test) const {
  for (const char* flag : kClickOnlyFlags) {
    const std::string f = flag;
    if (f != "--train" && f != "--val" && f != "--test" && app_->count(flag) > 0) {
      return InvalidArgument(f + " is for --format criteo|csv, not triples");
    }
  }
  const std::pair<const std::vector<std::string>*, std::string*> splits[] = {
      {&options_.train, train}, {&options_.val, val}, {&options_.test, test}};
  const char* names[] = {"--train", "--val", "--test"};
  for (int k = 0; k < 3; ++k) {
    if (splits[k].first->size() > 1) {
      return InvalidArgument(std::string(names[k]) + " takes one file for --format triples, got " +
                             std::to_string(splits[k].first->size()));
    }
    *splits[k].second = splits[k].first->empty() ? std::string() : splits[k].first->front();
  }
  return Status::OK();
}

Status ClickPreprocessFlags::Prepare(const std::string& format, const std::vector<std::string>& input,
                                     const std::string& split, const std::string& output, bool overwrite,
                                     const std::string& name, size_t memory_budget_bytes, const std::string& temp_dir) {
  datasets::ClickPreprocessOptions& o = options_;
  FS_ASSIGN_OR_RETURN(o.format, datasets::ParseClickFormat(format));
  o.input = input;
  if (input.empty() && o.train.empty()) {
    return InvalidArgument("--format " + format +
                           " needs --train FILE... [--val FILE...] [--test FILE...] or "
                           "--input FILE... [--split A,B,C]");
  }
  if (vocab_from_ != "train" && vocab_from_ != "all") {
    return InvalidArgument("--vocab-from must be \"train\" or \"all\", got \"" + vocab_from_ + "\"");
  }
  o.vocab_from_all = vocab_from_ == "all";
  if (!split.empty()) {
    if (input.empty()) return InvalidArgument("--split A,B,C splits --input files; with --train/--val/--test drop it");
    FS_ASSIGN_OR_RETURN(o.split_fractions, ParseNumberList(split, 3, "--split"));
  }
  o.output = output;
  o.overwrite = overwrite;
  o.name = name;
  o.memory_budget_bytes = memory_budget_bytes;
  o.temp_dir = temp_dir;
  return Status::OK();
}

Status ClickPreprocessFlags::Run(uint64_t seed) {
  datasets::ClickPreprocessReport r;
  FS_RETURN_IF_ERROR(datasets::PreprocessClicks(options_, CpuContext(seed), &r));
  std::string tables;
  for (size_t k = 0; k < r.table_rows.size(); ++k) {
    tables += (k > 0 ? " " : "") + r.field_names[k] + "=" + std::to_string(r.table_rows[k]);
  }
  std::printf("wrote %s: %lld samples (%lld positive), train/val/test %lld/%lld/%lld, %lld bad rows skipped\n",
              options_.output.c_str(), static_cast<long long>(r.num_samples), static_cast<long long>(r.positives),
              static_cast<long long>(r.num_train), static_cast<long long>(r.num_val),
              static_cast<long long>(r.num_test), static_cast<long long>(r.bad_rows));
  std::printf("table rows: %s\n", tables.c_str());
  return Status::OK();
}

}  // namespace foresight::apps
