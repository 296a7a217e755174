// `foresight preprocess --format sequences INPUT --output OUT`: user action
// logs ("user item" lines, space- or tab-separated integer ids; plain, .gz
// or .xz) to a sequences dataset (storage/sequences_dataset.h). The lines
// must come grouped by user, each user's actions in time order (as the
// SASRec authors' data files are). Items are renumbered 1..I in ascending
// order of their ids; users keep the file's order. The split is
// leave-one-out: a user's last action is the test item, the one before it
// the validation item, the rest are training; users with fewer than 3
// actions keep all for training and are not evaluated (as the authors do).
// Blank lines and '#' / '%' comment lines are skipped.
//
// Refused with "<file>:<line>: <what was expected>": a line without
// exactly two fields, an id that is not an integer, a user whose lines
// are not consecutive (naming where its earlier lines were); an input with
// no actions is refused naming the file. Nothing is written at OUT unless
// the whole input was read (the dataset is built in a staging directory and
// renamed into place).
#pragma once

#include <cstdint>
#include <string>

#include "foresight/core/status.h"

namespace foresight::datasets {

struct SequencesPreprocessOptions {
  std::string input;   // Required.
  std::string output;  // Required.
  bool overwrite = false;
  // Manifest "name". Default: "" = the input file's base name.
  std::string name;
};

struct SequencesPreprocessReport {
  int64_t num_users = 0;
  int64_t num_items = 0;
  int64_t num_actions = 0;
  int64_t eval_users = 0;  // users with a validation and a test item
};

Status PreprocessSequences(const SequencesPreprocessOptions& options, SequencesPreprocessReport* report = nullptr);

}  // namespace foresight::datasets
