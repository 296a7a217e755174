// `foresight preprocess --format criteo|csv` and `foresight generate clicks`:
// click logs to a clicks dataset (storage/clicks_dataset.h). Inputs may be
// plain, .gz or .xz and are streamed: RAM holds one block of rows plus, in
// vocabulary mode, the kept vocabularies; value counting spills sorted runs
// to disk to stay inside the memory budget. A bad row stops the run with
// "<file>:<line>: <what was expected>" (or is counted and skipped), and a
// failed run leaves no directory at the output path (DatasetWriter staging).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/context.h"
#include "foresight/core/status.h"

namespace foresight::datasets {

enum class ClickFormat { kCriteo, kCsv };
// "criteo" | "csv".
StatusOr<ClickFormat> ParseClickFormat(const std::string& s);

struct ClickPreprocessOptions {
  // --format. Default: kCriteo (label, I1..I13, C1..C26, tab-separated, no
  // header; empty = missing).
  ClickFormat format = ClickFormat::kCriteo;
  // --output OUT. Default: "" (required).
  std::string output;
  // --overwrite: replace an existing dataset at OUT. Default: false.
  bool overwrite = false;
  // --name: manifest "name". Default: "" = the first input's base name.
  std::string name;

  // Inputs. Either --train [--val] [--test] (the log comes split; samples are
  // stored train, then val, then test, files in the order given), or
  // --input with split_fractions (by line order).
  std::vector<std::string> train, val, test, input;
  // --split A,B,C for --input: train / val / test fractions summing to 1.
  // Default: 0.8, 0.1, 0.1.
  std::vector<double> split_fractions = {0.8, 0.1, 0.1};

  // Ids. hash_buckets > 0: --hash-buckets N rows per field, one pass: row 0
  // holds missing values, others hash into [1, N). Otherwise a vocabulary
  // per field from a first pass: values seen >= min_frequency times get rows
  // 1.. (most frequent first, ties by value); rarer and missing values share
  // row 0. Default: vocabulary with min_frequency 1.
  int64_t hash_buckets = 0;
  // --min-frequency K. Default: 1.
  int64_t min_frequency = 1;
  // --vocab-from all: count values over every split. Default: false = over
  // the training rows only, so a value never seen in training shares the
  // out-of-vocabulary row (which training does update) instead of getting a
  // row of its own that stays at its initial value. With --input, counting
  // only the training rows takes one more pass (to find where they end).
  bool vocab_from_all = false;

  // --format csv only. --columns: the names of every file's columns (a first
  // line equal to them, joined by the delimiter, is a header and skipped).
  std::vector<std::string> columns;
  // --label COL (required for csv), --dense COLS, --categorical COLS (default:
  // every column not named by --label, --dense or --drop), --drop COLS.
  std::string label;
  std::vector<std::string> dense, categorical, drop;
  // --delimiter: "comma" or "tab". Default: "" = comma for csv, tab for criteo.
  // Fields are split at every delimiter (no quoting, as click logs have
  // none): a quoted field holding the delimiter is a wrong field count.
  std::string delimiter;

  // --skip-bad-rows: count malformed rows and go on. Default: false (stop).
  bool skip_bad_rows = false;
  // --memory-budget for value counting. Default: 1 GiB.
  size_t memory_budget_bytes = size_t{1} << 30;
  // --temp-dir for spilled count runs. Default: "" = $TMPDIR or /tmp.
  std::string temp_dir;
};

struct ClickPreprocessReport {
  int64_t num_samples = 0;
  int64_t num_train = 0, num_val = 0, num_test = 0;
  int64_t bad_rows = 0;      // skipped with --skip-bad-rows
  int64_t header_lines = 0;  // csv headers skipped
  int64_t positives = 0;
  int64_t count_runs = 0;  // sorted runs spilled while counting values
  std::vector<std::string> field_names;
  std::vector<int64_t> table_rows;  // per categorical field
};

// Runs the preprocessing over ctx.pool. `report` may be null.
Status PreprocessClicks(const ClickPreprocessOptions& options, const ExecContext& ctx,
                        ClickPreprocessReport* report = nullptr);

// `foresight generate clicks`: a synthetic click log whose labels come from
// a hidden teacher DLRM (clicks_generate.cc explains its design):
//  * sample i, table t, bag slot j: popularity rank r ~ Zipf(zipf) over
//    [0, rows), stored id = perm_t(r) (a seeded permutation, so hot rows are
//    spread over the table);
//  * dense features: log(1 + x) with x exponential, like Criteo after its
//    transform;
//  * teacher: bottom MLP on the dense features, one embedding per table
//    (the sum over the bag), dot interaction of all pairs, top MLP, then a
//    logit scaled to a standard deviation of `sharpness` and shifted to the
//    mean click rate `ctr`; label ~ Bernoulli(sigmoid(logit)).
// Every value is a function of (seed, sample index), so the bytes do not
// depend on the thread count.
struct GenerateClicksOptions {
  std::string output;                    // --output OUT (required)
  bool overwrite = false;                // --overwrite
  std::string name = "teacher-clicks";   // --name
  int64_t num_tables = 26;               // --tables T
  int64_t rows = 100000;                 // --rows R: rows per table
  int64_t dim = 16;                      // --dim D: embedding dimension (teacher and the intended student)
  int64_t num_samples = 1000000;         // --samples N
  int64_t num_dense = 13;                // --dense-features
  std::vector<int64_t> bag_sizes = {1};  // --bag-sizes: one per table, or one for all
  double zipf = 1.05;                    // --zipf S (> 0)
  uint64_t seed = 0;                     // --seed
  // Teacher knobs (defaults make it learnable; see clicks_generate.cc).
  int64_t informative_tables = 8;  // --informative-tables: the first min(K, T) tables carry full signal
  int64_t rank = 4;                // --teacher-rank: rank of each teacher table
  double popularity_scale = 2000;  // --popularity-scale: rank at which a row's signal halves
  double sharpness = 1.6;          // --sharpness: std of the teacher logit
  double ctr = 0.25;               // --ctr: mean click probability
  std::vector<double> split_fractions = {0.8, 0.1, 0.1};  // --split
};

struct GenerateClicksReport {
  int64_t num_samples = 0;
  int64_t num_train = 0, num_val = 0, num_test = 0;
  int64_t positives = 0;
  double teacher_test_auc = 0;      // AUC of the teacher probability vs the test labels
  double teacher_test_logloss = 0;  // logloss of the teacher probability on the test labels
};

Status GenerateClicks(const GenerateClicksOptions& options, const ExecContext& ctx,
                      GenerateClicksReport* report = nullptr);

}  // namespace foresight::datasets
