// The options of `foresight train`, one table shared by the command line and
// config files: each key is a long flag name and a TrainOptions field, so a
// value means the same from --epochs 10, `epochs: 10` (YAML) or
// `epochs = 10` (TOML). Explicit flags override the config file.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "config.h"
#include "foresight/core/status.h"
#include "foresight/trainer/train_options.h"

namespace foresight::apps {

using trainer::TrainOptions;

// A TrainOptions field of one of the supported types.
using TrainField =
    std::variant<std::string TrainOptions::*, int TrainOptions::*, int64_t TrainOptions::*,
                 uint64_t TrainOptions::*, float TrainOptions::*, bool TrainOptions::*,
                 std::vector<int64_t> TrainOptions::*>;

struct TrainKey {
  const char* name;     // long flag name without "--", e.g. "batch-size"
  const char* help;
  TrainField field;
  const char* choices;  // "sage|gcn|gat" for enumerations, else nullptr
  bool negate;          // bool stored inverted ("quiet" sets progress)
  // An int64 byte count: values take K/M/G/T suffixes (KiB, MiB, GiB, TiB)
  // and `unset_word` ("auto", "none") stands for `unset_value`.
  bool bytes = false;
  const char* unset_word = nullptr;
  int64_t unset_value = 0;
};

// Every key `foresight train` accepts (flags and config files alike).
const std::vector<TrainKey>& TrainKeys();
// nullptr when `name` (normalised) is not a key.
const TrainKey* FindTrainKey(const std::string& name);
// "an integer", "a number", "true or false", "a list of integers", ...
std::string ExpectedType(const TrainKey& key);

// The field's current value as a flag would spell it ("15,10", "0.01").
std::string FormatTrainValue(const TrainKey& key, const TrainOptions& options);

// Converts `value` to the key's type and stores it. `where` starts the error
// message: "cfg.yaml: key 'epochs'" or "--epochs". Errors name the expected
// type and the value.
Status ApplyTrainValue(const TrainKey& key, const ConfigValue& value, const std::string& where,
                       TrainOptions* options);

// Applies every entry of a config file; an unknown key is an error naming
// the file and the key.
Status ApplyConfigFile(const ConfigFile& file, TrainOptions* options);

// The key nearest to `name` (edit distance), for "did you mean" hints.
std::string NearestTrainKey(const std::string& name);

// `s` with TrainOptions field names (TrainOptions::Validate's "batch_size:
// ...") spelled as the flags users type ("--batch-size: ..."); OK stays OK.
Status WithFlagNames(const Status& s);

// One command-line value that was given explicitly.
struct FlagValue {
  std::string key;  // TrainKey::name
  ConfigValue value;
};

// Builds TrainOptions as `foresight train` does: defaults, then the config
// file (when config_path is not empty), then the explicit flags, then the
// positional dataset (when not empty). Does not Validate().
StatusOr<TrainOptions> ResolveTrainOptions(const std::string& config_path,
                                           const std::vector<FlagValue>& flags,
                                           const std::string& dataset);

}  // namespace foresight::apps
