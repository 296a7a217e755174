// Config files for the CLI: a flat YAML (.yaml/.yml/.json) or TOML (.toml) mapping
// from long flag names to values, read into untyped entries that the
// subcommands convert (train_settings.h). Kept apart from the conversion so
// a value reads the same whether it came from a file or a flag.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::apps {

// One value before conversion to an option's type.
struct ConfigValue {
  enum class Kind {
    kText,    // untyped: a plain YAML scalar or a command-line value
    kString,  // a quoted YAML scalar or a TOML string
    kBool,
    kInt,
    kFloat,
    kList,
    kTable,  // a nested mapping: never valid for an option
    kNull,   // an empty YAML value
    kOther,  // a TOML date or time
  };
  Kind kind = Kind::kNull;
  std::string text;  // kText, kString
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::vector<ConfigValue> items;  // kList

  static ConfigValue Text(std::string s);
  static ConfigValue Bool(bool b);
  // How the value reads in an error message: "'ten'", "a list", "true".
  std::string Describe() const;
};

struct ConfigEntry {
  std::string key;  // normalised (NormalizeKey)
  ConfigValue value;
};

struct ConfigFile {
  std::string path;
  std::vector<ConfigEntry> entries;  // in file order (TOML: sorted by key)
};

// "batch_size" -> "batch-size": config keys may use '_' or '-'.
std::string NormalizeKey(const std::string& key);

// Reads a flat mapping; the format follows the extension (.yaml, .yml,
// .json read as YAML, .toml). Errors name the file (and the line for syntax errors), a key
// given twice, or a top level that is not a mapping.
StatusOr<ConfigFile> ReadConfigFile(const std::string& path);

}  // namespace foresight::apps
