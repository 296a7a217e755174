#include "config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <toml.hpp>

#include "foresight/core/utf8.h"

namespace foresight::apps {

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoError("open config file " + path, errno);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return ErrnoError("read config file " + path, errno);
  return ss.str();
}

// ---- YAML ------------------------------------------------------------------

ConfigValue FromYaml(const YAML::Node& node) {
  ConfigValue v;
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      v.kind = ConfigValue::Kind::kNull;
      break;
    case YAML::NodeType::Scalar:
      // yaml-cpp tags quoted scalars "!" and plain ones "?": a quoted value is
      // a string, so `epochs: "10"` is a type error as in TOML.
      v.kind = node.Tag() == "!" ? ConfigValue::Kind::kString : ConfigValue::Kind::kText;
      v.text = node.Scalar();
      break;
    case YAML::NodeType::Sequence:
      v.kind = ConfigValue::Kind::kList;
      for (const auto& item : node) v.items.push_back(FromYaml(item));
      break;
    case YAML::NodeType::Map:
      v.kind = ConfigValue::Kind::kTable;
      break;
  }
  return v;
}

StatusOr<ConfigFile> ReadYaml(const std::string& path, const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
  }
  ConfigFile file;
  file.path = path;
  if (root.IsNull()) return file;  // an empty file sets nothing
  if (!root.IsMap()) {
    return InvalidArgument(path + ": expected a mapping of option names to values at the top level");
  }
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) {
      return InvalidArgument(path + ":" + std::to_string(kv.first.Mark().line + 1) +
                             ": expected an option name as key");
    }
    file.entries.push_back({NormalizeKey(kv.first.Scalar()), FromYaml(kv.second)});
  }
  return file;
}

// ---- TOML ------------------------------------------------------------------

using TomlValue = toml::basic_value<toml::discard_comments, std::map, std::vector>;

ConfigValue FromToml(const TomlValue& node) {
  ConfigValue v;
  switch (node.type()) {
    case toml::value_t::boolean:
      v.kind = ConfigValue::Kind::kBool;
      v.boolean = node.as_boolean();
      break;
    case toml::value_t::integer:
      v.kind = ConfigValue::Kind::kInt;
      v.integer = node.as_integer();
      break;
    case toml::value_t::floating:
      v.kind = ConfigValue::Kind::kFloat;
      v.real = node.as_floating();
      break;
    case toml::value_t::string:
      v.kind = ConfigValue::Kind::kString;
      v.text = node.as_string().str;
      break;
    case toml::value_t::array:
      v.kind = ConfigValue::Kind::kList;
      for (const auto& item : node.as_array()) v.items.push_back(FromToml(item));
      break;
    case toml::value_t::table:
      v.kind = ConfigValue::Kind::kTable;
      break;
    default:  // dates and times
      v.kind = ConfigValue::Kind::kOther;
      break;
  }
  return v;
}

StatusOr<ConfigFile> ReadToml(const std::string& path, const std::string& text) {
  TomlValue root;
  try {
    std::istringstream in(text);
    root = toml::parse<toml::discard_comments, std::map, std::vector>(in, path);
  } catch (const std::exception& e) {
    // toml11's message already carries "[error] ... --> path" and the line.
    return InvalidArgument(path + ": TOML syntax error: " + e.what());
  }
  ConfigFile file;
  file.path = path;
  std::vector<std::pair<size_t, ConfigEntry>> by_line;
  for (const auto& kv : root.as_table()) {
    by_line.push_back({kv.second.location().line(), {NormalizeKey(kv.first), FromToml(kv.second)}});
  }
  // std::map sorted the keys; file order reads better in errors.
  std::stable_sort(by_line.begin(), by_line.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& e : by_line) file.entries.push_back(std::move(e.second));
  return file;
}

}  // namespace

ConfigValue ConfigValue::Text(std::string s) {
  ConfigValue v;
  v.kind = Kind::kText;
  v.text = std::move(s);
  return v;
}

ConfigValue ConfigValue::Bool(bool b) {
  ConfigValue v;
  v.kind = Kind::kBool;
  v.boolean = b;
  return v;
}

std::string ConfigValue::Describe() const {
  switch (kind) {
    case Kind::kText: return "'" + text + "'";
    case Kind::kString: return "the string \"" + text + "\"";
    case Kind::kBool: return boolean ? "true" : "false";
    case Kind::kInt: return std::to_string(integer);
    case Kind::kFloat: {
      std::ostringstream ss;
      ss << real;
      return ss.str();
    }
    case Kind::kList: return "a list";
    case Kind::kTable: return "a table";
    case Kind::kNull: return "an empty value";
    case Kind::kOther: return "a date/time";
  }
  return "?";
}

std::string NormalizeKey(const std::string& key) {
  std::string out = key;
  std::replace(out.begin(), out.end(), '_', '-');
  return out;
}

StatusOr<ConfigFile> ReadConfigFile(const std::string& path) {
  // JSON is YAML 1.2's flow style, so the YAML reader takes .json files too.
  const bool yaml = EndsWith(path, ".yaml") || EndsWith(path, ".yml") || EndsWith(path, ".json");
  const bool toml = EndsWith(path, ".toml");
  if (!yaml && !toml) {
    return InvalidArgument(path + ": unknown config format: expected a .yaml, .yml, .json or .toml file");
  }
  FS_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  // toml11 reads a multi-byte sequence by its lead byte, past the end of the
  // buffer when the file ends inside one (ASan: heap-buffer-overflow); every
  // format must be UTF-8, so bad bytes are refused before any parser runs.
  FS_RETURN_IF_ERROR(CheckUtf8(text, path));
  FS_ASSIGN_OR_RETURN(ConfigFile file, yaml ? ReadYaml(path, text) : ReadToml(path, text));
  std::set<std::string> seen;
  for (const auto& e : file.entries) {
    if (!seen.insert(e.key).second) {
      return InvalidArgument(path + ": key '" + e.key + "' is given twice ('-' and '_' are the same)");
    }
  }
  return file;
}

}  // namespace foresight::apps
