// `foresight preprocess --format criteo|csv`: click logs to a clicks dataset
// (datasets/clicks.h). Vocabulary mode reads the inputs twice (count, then
// write); hash mode once. Rows stream through fixed-size blocks.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "click_rows.h"
#include "click_vocab.h"
#include "foresight/core/rng.h"
#include "foresight/datasets/clicks.h"
#include "foresight/storage/clicks_dataset.h"
#include "foresight/storage/dataset.h"
#include "preprocess_internal.h"

namespace foresight::datasets {
namespace {

using internal::ClickRow;
using internal::ClickSchema;

constexpr int64_t kBlockRows = 8192;  // rows buffered before the .npy writers

// Stable 64-bit hash of a value (FNV-1a, then mixed with the field so equal
// values of different fields land on unrelated rows).
uint64_t HashValue(int64_t field, std::string_view v) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : v) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return Mix64(h ^ Mix64(static_cast<uint64_t>(field) + 1));
}

// Buffers rows and streams them to dense.npy, labels.npy and cat_<k>.npy.
class ClickArrayWriter {
 public:
  Status Open(storage::DatasetWriter* w, int64_t num_dense, const std::vector<int64_t>& table_rows) {
    num_dense_ = num_dense;
    FS_ASSIGN_OR_RETURN(dense_,
                        w->OpenArray(std::string(storage::kClickDenseArray) + ".npy", DType::kF32, {num_dense}));
    FS_ASSIGN_OR_RETURN(labels_, w->OpenArray(std::string(storage::kClickLabelsArray) + ".npy", DType::kU8, {}));
    for (size_t k = 0; k < table_rows.size(); ++k) {
      const bool wide = table_rows[k] > INT32_MAX;
      wide_.push_back(wide);
      FS_ASSIGN_OR_RETURN(auto ids, w->OpenArray(storage::ClickIdsArray(static_cast<int64_t>(k)) + ".npy",
                                                 wide ? DType::kI64 : DType::kI32, {}));
      ids_.push_back(std::move(ids));
    }
    ids_block_.resize(table_rows.size());
    return Status::OK();
  }
  // Appends one row; `ids` has one id per field.
  Status Append(const ClickRow& row, const std::vector<int64_t>& ids) {
    dense_block_.insert(dense_block_.end(), row.dense.begin(), row.dense.end());
    labels_block_.push_back(row.label);
    for (size_t k = 0; k < ids.size(); ++k) ids_block_[k].push_back(ids[k]);
    if (static_cast<int64_t>(labels_block_.size()) == kBlockRows) return Flush();
    return Status::OK();
  }
  Status Finish() {
    FS_RETURN_IF_ERROR(Flush());
    FS_RETURN_IF_ERROR(dense_->Finish());
    FS_RETURN_IF_ERROR(labels_->Finish());
    for (auto& w : ids_) FS_RETURN_IF_ERROR(w->Finish());
    return Status::OK();
  }

 private:
  Status Flush() {
    const int64_t n = static_cast<int64_t>(labels_block_.size());
    if (n == 0) return Status::OK();
    FS_RETURN_IF_ERROR(dense_->Append(dense_block_.data(), n));
    FS_RETURN_IF_ERROR(labels_->Append(labels_block_.data(), n));
    for (size_t k = 0; k < ids_.size(); ++k) {
      if (wide_[k]) {
        FS_RETURN_IF_ERROR(ids_[k]->Append(ids_block_[k].data(), n));
      } else {
        narrow_.assign(ids_block_[k].begin(), ids_block_[k].end());
        FS_RETURN_IF_ERROR(ids_[k]->Append(narrow_.data(), n));
      }
      ids_block_[k].clear();
    }
    dense_block_.clear();
    labels_block_.clear();
    return Status::OK();
  }

  int64_t num_dense_ = 0;
  std::unique_ptr<storage::NpyWriter> dense_, labels_;
  std::vector<std::unique_ptr<storage::NpyWriter>> ids_;
  std::vector<bool> wide_;
  std::vector<float> dense_block_;
  std::vector<uint8_t> labels_block_;
  std::vector<std::vector<int64_t>> ids_block_;
  std::vector<int32_t> narrow_;
};

// Writes vocab_<k>.npy: |S<w> [rows], row 0 (out of vocabulary) = b"".
Status WriteVocabulary(storage::DatasetWriter* w, int64_t field, const std::vector<std::string>& values) {
  size_t width = 1;
  for (const std::string& v : values) width = std::max(width, v.size());
  FS_ASSIGN_OR_RETURN(auto out, storage::NpyWriter::CreateBytes(
                                    w->StagingPath(storage::ClickVocabArray(field) + ".npy"), static_cast<int>(width)));
  std::vector<char> row(width, '\0');
  FS_RETURN_IF_ERROR(out->Append(row.data(), 1));
  for (const std::string& v : values) {
    std::fill(row.begin(), row.end(), '\0');
    std::copy(v.begin(), v.end(), row.begin());
    FS_RETURN_IF_ERROR(out->Append(row.data(), 1));
  }
  return out->Finish();
}

// Rows of the training split of n rows split by line order.
int64_t TrainRows(int64_t n, const std::vector<double>& fractions) {
  return std::llround(static_cast<double>(n) * fractions[0]);
}

Status CheckOptions(const ClickPreprocessOptions& o) {
  if (o.output.empty()) return InvalidArgument("--output is required");
  const bool split_given = !o.train.empty() || !o.val.empty() || !o.test.empty();
  if (split_given && !o.input.empty()) {
    return InvalidArgument(
        "give either --train [--val] [--test] (a log that comes split) or --input with --split, not both");
  }
  if (!split_given && o.input.empty()) return InvalidArgument("no input: give --train FILE... or --input FILE...");
  if (split_given && o.train.empty()) return InvalidArgument("--val / --test need --train FILE...");
  if (!split_given) {
    if (o.split_fractions.size() != 3) return InvalidArgument("--split takes three fractions: train,val,test");
    double sum = 0;
    for (double f : o.split_fractions) {
      if (!(f >= 0 && f <= 1)) return InvalidArgument("--split fractions must lie in [0, 1]");
      sum += f;
    }
    if (std::fabs(sum - 1.0) > 1e-6) {
      return InvalidArgument("--split fractions must sum to 1, got " + std::to_string(sum));
    }
  }
  if (o.hash_buckets < 0) return InvalidArgument("--hash-buckets must be >= 2");
  if (o.hash_buckets == 1) return InvalidArgument("--hash-buckets must be >= 2 (row 0 holds missing values)");
  if (o.min_frequency < 1) return InvalidArgument("--min-frequency must be >= 1");
  if (o.hash_buckets > 0 && o.min_frequency > 1) {
    return InvalidArgument("--hash-buckets and --min-frequency exclude each other (hash ids keep every value)");
  }
  if (o.memory_budget_bytes < 4096) return InvalidArgument("--memory-budget must be at least 4 KiB");
  return Status::OK();
}

}  // namespace

StatusOr<ClickFormat> ParseClickFormat(const std::string& s) {
  if (s == "criteo") return ClickFormat::kCriteo;
  if (s == "csv") return ClickFormat::kCsv;
  return InvalidArgument("click log format must be \"criteo\" or \"csv\", got \"" + s + "\"");
}

Status PreprocessClicks(const ClickPreprocessOptions& o, const ExecContext& ctx, ClickPreprocessReport* report) {
  (void)ctx;  // parsing is sequential: one decompressing reader per file
  FS_RETURN_IF_ERROR(CheckOptions(o));
  FS_ASSIGN_OR_RETURN(ClickSchema schema, internal::MakeClickSchema(o));
  const int64_t num_fields = static_cast<int64_t>(schema.cat_columns.size());
  const int64_t num_dense = static_cast<int64_t>(schema.dense_columns.size());
  const bool split_given = o.input.empty();
  // All files in storage order, and the split (0 train, 1 val, 2 test) of each.
  std::vector<std::string> files;
  std::vector<int> file_split;
  for (int s = 0; s < 3; ++s) {
    const std::vector<std::string>& list = !split_given ? (s == 0 ? o.input : std::vector<std::string>{})
                                                        : (s == 0   ? o.train
                                                           : s == 1 ? o.val
                                                                    : o.test);
    for (const std::string& f : list) {
      files.push_back(f);
      file_split.push_back(s);
    }
  }

  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::DatasetWriter> writer,
                      storage::DatasetWriter::Create(o.output, o.overwrite));
  ClickPreprocessReport r;
  std::vector<int64_t> table_rows(static_cast<size_t>(num_fields), o.hash_buckets);

  // Pass 1 (vocabulary mode): count every (field, value).
  std::unique_ptr<internal::ClickVocabulary> vocab;
  if (o.hash_buckets == 0) {
    vocab = std::make_unique<internal::ClickVocabulary>(num_fields, o.min_frequency, o.memory_budget_bytes, o.temp_dir);
    // Rows that count: the training rows (files of --train, or the first
    // fraction of --input, which takes a pass to count the good rows), or
    // all with --vocab-from all.
    int64_t counted_rows = INT64_MAX;
    int64_t bad = 0, headers = 0;
    if (!o.vocab_from_all && !split_given) {
      int64_t good = 0;
      FS_RETURN_IF_ERROR(internal::ForEachClickRow(
          "count training rows", schema, files, o.skip_bad_rows,
          [&](size_t, const ClickRow&) {
            ++good;
            return Status::OK();
          },
          &bad, &headers));
      counted_rows = TrainRows(good, o.split_fractions);
      bad = headers = 0;
    }
    int64_t row_index = 0;
    FS_RETURN_IF_ERROR(internal::ForEachClickRow(
        "count values", schema, files, o.skip_bad_rows,
        [&](size_t file, const ClickRow& row) -> Status {
          if (row_index++ >= counted_rows || (!o.vocab_from_all && file_split[file] != 0)) return Status::OK();
          for (int64_t k = 0; k < num_fields; ++k) {
            const std::string_view v = row.cats[static_cast<size_t>(k)];
            if (!v.empty()) FS_RETURN_IF_ERROR(vocab->Add(k, v));
          }
          return Status::OK();
        },
        &bad, &headers));
    FS_RETURN_IF_ERROR(vocab->Finish());
    r.count_runs = vocab->runs_spilled();
    for (int64_t k = 0; k < num_fields; ++k) {
      table_rows[static_cast<size_t>(k)] = vocab->rows(k);
      FS_RETURN_IF_ERROR(WriteVocabulary(writer.get(), k, vocab->values(k)));
    }
  }

  // Pass 2 (the only pass with hash ids): map ids and write the arrays.
  ClickArrayWriter arrays;
  FS_RETURN_IF_ERROR(arrays.Open(writer.get(), num_dense, table_rows));
  std::vector<int64_t> ids(static_cast<size_t>(num_fields));
  int64_t per_split[3] = {0, 0, 0};
  FS_RETURN_IF_ERROR(internal::ForEachClickRow(
      "write rows", schema, files, o.skip_bad_rows,
      [&](size_t file, const ClickRow& row) -> Status {
        for (int64_t k = 0; k < num_fields; ++k) {
          const std::string_view v = row.cats[static_cast<size_t>(k)];
          int64_t id = 0;
          if (vocab != nullptr) {
            id = vocab->Row(k, v);
          } else if (!v.empty()) {
            id = 1 + static_cast<int64_t>(HashValue(k, v) % static_cast<uint64_t>(o.hash_buckets - 1));
          }
          ids[static_cast<size_t>(k)] = id;
        }
        ++per_split[file_split[file]];
        r.positives += row.label;
        return arrays.Append(row, ids);
      },
      &r.bad_rows, &r.header_lines));
  FS_RETURN_IF_ERROR(arrays.Finish());

  storage::ClicksLayout layout;
  layout.num_samples = per_split[0] + per_split[1] + per_split[2];
  layout.dense = schema.DenseNames();
  const std::vector<std::string> cat_names = schema.CatNames();
  for (int64_t k = 0; k < num_fields; ++k) {
    storage::ClickField f;
    f.name = cat_names[static_cast<size_t>(k)];
    f.rows = table_rows[static_cast<size_t>(k)];
    f.bag_size = 1;
    f.has_vocab = vocab != nullptr;
    layout.fields.push_back(f);
  }
  int64_t bounds[2];
  if (split_given) {
    bounds[0] = per_split[0];
    bounds[1] = per_split[0] + per_split[1];
  } else {
    // By line order: the first fraction of the good rows trains, and so on.
    const double n = static_cast<double>(layout.num_samples);
    bounds[0] = TrainRows(layout.num_samples, o.split_fractions);
    bounds[1] = std::min<int64_t>(layout.num_samples, std::llround(n * (o.split_fractions[0] + o.split_fractions[1])));
  }
  layout.train = {0, bounds[0]};
  layout.val = {bounds[0], bounds[1]};
  layout.test = {bounds[1], layout.num_samples};
  layout.id_mode = vocab != nullptr ? "vocab" : "hash";

  storage::DatasetManifest& m = writer->manifest();
  m.kind = storage::kKindClicks;
  m.name = !o.name.empty() ? o.name : internal::BaseName(files.front());
  m.clicks = layout.ToJson();
  m.source = {
      {"tool", "foresight preprocess"},
      {"format", o.format == ClickFormat::kCriteo ? "criteo" : "csv"},
      {"files", files},
      {"id_mode", layout.id_mode},
      {"min_frequency", o.min_frequency},
      {"vocab_from", o.vocab_from_all ? "all" : "train"},
      {"hash_buckets", o.hash_buckets},
      {"bad_rows_skipped", r.bad_rows},
      {"positives", r.positives},
      {"dense_transform", "log(1 + x), x <= 0 and missing -> 0"},
  };
  FS_RETURN_IF_ERROR(writer->Commit());

  r.num_samples = layout.num_samples;
  r.num_train = layout.train.size();
  r.num_val = layout.val.size();
  r.num_test = layout.test.size();
  r.field_names = cat_names;
  r.table_rows = table_rows;
  if (report != nullptr) *report = std::move(r);
  return Status::OK();
}

}  // namespace foresight::datasets
