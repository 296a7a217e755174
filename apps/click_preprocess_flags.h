// The flags of `foresight preprocess --format criteo|csv` (click logs to a
// clicks dataset, datasets/clicks.h), kept apart from the graph formats'
// flags. --input, --split, --output, --overwrite, --name and the dataset tool
// flags are shared with the graph formats and handed over in Prepare.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "foresight/core/status.h"
#include "foresight/datasets/clicks.h"

namespace foresight::apps {

class ClickPreprocessFlags {
 public:
  // True for the formats this handles ("criteo", "csv").
  static bool Handles(const std::string& format);
  // Registers --train, --val, --test, --hash-buckets, --min-frequency, --vocab-from,
  // --columns, --label, --dense, --categorical, --drop, --delimiter and
  // --skip-bad-rows on `app`.
  void Add(CLI::App* app);
  // Fills the options from these flags and the shared ones; `split` is the
  // --split text ("" = default 0.8,0.1,0.1).
  Status Prepare(const std::string& format, const std::vector<std::string>& input, const std::string& split,
                 const std::string& output, bool overwrite, const std::string& name, size_t memory_budget_bytes,
                 const std::string& temp_dir);
  // Runs the preprocessing and prints the summary line.
  Status Run(uint64_t seed);
  // True when a click-only flag was given (for the graph formats to reject).
  bool AnyGiven() const;
  // For --format triples, which shares --train/--val/--test: one file each
  // (empty when not given); InvalidArgument for several files or any other
  // click-only flag.
  Status TakeSplitFiles(std::string* train, std::string* val, std::string* test) const;

 private:
  CLI::App* app_ = nullptr;
  datasets::ClickPreprocessOptions options_;
  std::string vocab_from_ = "train";
};

}  // namespace foresight::apps
