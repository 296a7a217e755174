// manifest.json of a dataset directory: JSON <-> DatasetManifest.
#include <cerrno>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "foresight/storage/dataset.h"

namespace foresight::storage {
namespace {

using nlohmann::json;

Status FieldError(const std::string& origin, const std::string& field, const std::string& what) {
  return DataLoss(origin + ": field \"" + field + "\" " + what);
}

Status GetInt(const json& j, const std::string& origin, const char* field, int64_t* out,
              bool required = true) {
  auto it = j.find(field);
  if (it == j.end()) {
    if (!required) return Status::OK();
    return FieldError(origin, field, "is missing");
  }
  if (!it->is_number_integer()) return FieldError(origin, field, "must be an integer, got " + it->dump());
  const int64_t v = it->get<int64_t>();
  if (v < 0) return FieldError(origin, field, "must be >= 0, got " + std::to_string(v));
  *out = v;
  return Status::OK();
}

// `label` is the field's full name in messages ("arrays.labels.file").
Status GetString(const json& j, const std::string& origin, const char* field, std::string* out,
                 const std::string& label = "") {
  const std::string name = label.empty() ? std::string(field) : label;
  auto it = j.find(field);
  if (it == j.end()) return FieldError(origin, name, "is missing");
  if (!it->is_string()) return FieldError(origin, name, "must be a string, got " + it->dump());
  *out = it->get<std::string>();
  return Status::OK();
}

}  // namespace

const char* IdMapName(IdMap m) {
  switch (m) {
    case IdMap::kNone: return "none";
    case IdMap::kInt: return "int";
    case IdMap::kString: return "string";
  }
  return "?";
}

const char* FeatureLayoutName(FeatureLayout l) {
  return l == FeatureLayout::kSparse ? "sparse" : "dense";
}

json DatasetManifest::ToJson() const {
  json arr = json::object();
  for (const auto& [name, e] : arrays) {
    arr[name] = {{"file", e.file}, {"dtype", e.dtype}, {"shape", e.shape}};
  }
  json j = {
      {"format", format},
      {"version", version},
      {"kind", kind},
      {"name", name},
      {"num_nodes", num_nodes},
      {"num_edges", num_edges},
      {"feature_dim", feature_dim},
      {"feature_dtype", DTypeName(feature_dtype)},
      {"num_classes", num_classes},
      {"id_map", IdMapName(id_map)},
      {"arrays", arr},
      {"partitions", partitions},
      {"source", source.is_null() ? json::object() : source},
  };
  if (!class_names.empty()) j["class_names"] = class_names;
  // Written only when sparse, so dense manifests stay as before.
  if (feature_layout != FeatureLayout::kDense) j["feature_layout"] = FeatureLayoutName(feature_layout);
  if (!clicks.is_null()) j["clicks"] = clicks;
  if (!link.is_null()) j["link"] = link;
  if (!sequences.is_null()) j["sequences"] = sequences;
  return j;
}

Status ParseManifest(const json& j, const std::string& origin, DatasetManifest* out) {
  if (!j.is_object()) return DataLoss(origin + ": manifest must be a JSON object");
  DatasetManifest m;
  FS_RETURN_IF_ERROR(GetString(j, origin, "format", &m.format));
  if (m.format != kDatasetFormat) {
    return DataLoss(origin + ": not a foresight dataset manifest (format is \"" + m.format +
                    "\", expected \"" + kDatasetFormat + "\")");
  }
  int64_t version = 0;
  FS_RETURN_IF_ERROR(GetInt(j, origin, "version", &version));
  if (version != kDatasetVersion) {
    return Unimplemented(origin + ": dataset format version " + std::to_string(version) +
                         " is not supported (this build reads version " +
                         std::to_string(kDatasetVersion) + ")");
  }
  m.version = static_cast<int>(version);
  if (j.contains("kind")) {
    FS_RETURN_IF_ERROR(GetString(j, origin, "kind", &m.kind));
    if (m.kind != kKindGraph && m.kind != kKindClicks && m.kind != kKindSequences) {
      return FieldError(origin, "kind", "must be \"" + std::string(kKindGraph) + "\", \"" + kKindClicks + "\" or \"" +
                                            kKindSequences + "\", got \"" + m.kind + "\"");
    }
  }
  FS_RETURN_IF_ERROR(GetString(j, origin, "name", &m.name));
  FS_RETURN_IF_ERROR(GetInt(j, origin, "num_nodes", &m.num_nodes));
  FS_RETURN_IF_ERROR(GetInt(j, origin, "num_edges", &m.num_edges));
  FS_RETURN_IF_ERROR(GetInt(j, origin, "feature_dim", &m.feature_dim));
  FS_RETURN_IF_ERROR(GetInt(j, origin, "num_classes", &m.num_classes));
  std::string s;
  FS_RETURN_IF_ERROR(GetString(j, origin, "feature_dtype", &s));
  if (s == "f32") {
    m.feature_dtype = DType::kF32;
  } else if (s == "f16") {
    m.feature_dtype = DType::kF16;
  } else {
    return FieldError(origin, "feature_dtype", "must be \"f32\" or \"f16\", got \"" + s + "\"");
  }
  if (j.contains("feature_layout")) {
    FS_RETURN_IF_ERROR(GetString(j, origin, "feature_layout", &s));
    if (s == "dense") {
      m.feature_layout = FeatureLayout::kDense;
    } else if (s == "sparse") {
      m.feature_layout = FeatureLayout::kSparse;
    } else {
      return FieldError(origin, "feature_layout", "must be \"dense\" or \"sparse\", got \"" + s + "\"");
    }
  }
  FS_RETURN_IF_ERROR(GetString(j, origin, "id_map", &s));
  if (s == "none") {
    m.id_map = IdMap::kNone;
  } else if (s == "int") {
    m.id_map = IdMap::kInt;
  } else if (s == "string") {
    m.id_map = IdMap::kString;
  } else {
    return FieldError(origin, "id_map", "must be \"none\", \"int\" or \"string\", got \"" + s + "\"");
  }
  auto names = j.find("class_names");
  if (names != j.end()) {
    if (!names->is_array() || static_cast<int64_t>(names->size()) != m.num_classes) {
      return FieldError(origin, "class_names",
                        "must be a list of num_classes = " + std::to_string(m.num_classes) + " strings");
    }
    for (const json& n : *names) {
      if (!n.is_string()) return FieldError(origin, "class_names", "must hold strings, got " + n.dump());
      m.class_names.push_back(n.get<std::string>());
    }
  }
  auto arrays = j.find("arrays");
  if (arrays == j.end() || !arrays->is_object()) return FieldError(origin, "arrays", "must be an object");
  for (const auto& [name, e] : arrays->items()) {
    const std::string field = "arrays." + name;
    if (!e.is_object()) return FieldError(origin, field, "must be an object");
    ArrayEntry a;
    FS_RETURN_IF_ERROR(GetString(e, origin, "file", &a.file, field + ".file"));
    FS_RETURN_IF_ERROR(GetString(e, origin, "dtype", &a.dtype, field + ".dtype"));
    if (a.file.empty() || a.file.find('/') != std::string::npos || a.file == "." || a.file == "..") {
      return FieldError(origin, field + ".file", "must be a plain file name inside the dataset dir, got \"" + a.file + "\"");
    }
    auto shape = e.find("shape");
    if (shape == e.end() || !shape->is_array()) return FieldError(origin, field + ".shape", "must be a list of integers");
    for (const auto& d : *shape) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) {
        return FieldError(origin, field + ".shape", "must be a list of non-negative integers, got " + shape->dump());
      }
      a.shape.push_back(d.get<int64_t>());
    }
    m.arrays[name] = std::move(a);
  }
  auto parts = j.find("partitions");
  if (parts != j.end()) {
    if (!parts->is_null() && !parts->is_object()) {
      return FieldError(origin, "partitions", "must be null or an object, got " + parts->dump());
    }
    m.partitions = *parts;
    FS_RETURN_IF_ERROR(ParsePartitionOffsets(m, origin).status());
  }
  auto clicks = j.find("clicks");
  if (clicks != j.end() && !clicks->is_null()) {
    if (!clicks->is_object()) return FieldError(origin, "clicks", "must be an object");
    m.clicks = *clicks;
  }
  if (m.kind == kKindClicks && m.clicks.is_null()) {
    return FieldError(origin, "clicks", "is missing (kind is \"clicks\")");
  }
  auto sequences = j.find("sequences");
  if (sequences != j.end() && !sequences->is_null()) {
    if (!sequences->is_object()) return FieldError(origin, "sequences", "must be an object");
    m.sequences = *sequences;
  }
  if (m.kind == kKindSequences && m.sequences.is_null()) {
    return FieldError(origin, "sequences", "is missing (kind is \"sequences\")");
  }
  auto link = j.find("link");
  if (link != j.end() && !link->is_null()) {
    if (!link->is_object()) return FieldError(origin, "link", "must be an object");
    m.link = *link;
  }
  auto src = j.find("source");
  if (src != j.end()) {
    if (!src->is_object()) return FieldError(origin, "source", "must be an object");
    m.source = *src;
  }
  *out = std::move(m);
  return Status::OK();
}

StatusOr<std::vector<int64_t>> ParsePartitionOffsets(const DatasetManifest& m, const std::string& origin) {
  std::vector<int64_t> offsets;
  const json& p = m.partitions;
  if (p.is_null()) return offsets;
  if (!p.is_object()) return FieldError(origin, "partitions", "must be null or an object, got " + p.dump());
  auto pit = p.find("parts");
  if (pit == p.end() || !pit->is_number_integer() || pit->get<int64_t>() < 1) {
    return FieldError(origin, "partitions.parts",
                      "must be an integer >= 1, got " + (pit == p.end() ? std::string("nothing") : pit->dump()));
  }
  const int64_t parts = pit->get<int64_t>();
  auto it = p.find("offsets");
  if (it == p.end() || !it->is_array()) {
    return FieldError(origin, "partitions.offsets", "must be a list of P+1 row offsets");
  }
  if (static_cast<int64_t>(it->size()) != parts + 1) {
    return FieldError(origin, "partitions.offsets",
                      "must hold parts+1 = " + std::to_string(parts + 1) + " row offsets, got " +
                          std::to_string(it->size()));
  }
  offsets.reserve(it->size());
  for (const json& v : *it) {
    if (!v.is_number_integer()) {
      return FieldError(origin, "partitions.offsets",
                        "entry " + std::to_string(offsets.size()) + " must be an integer, got " + v.dump());
    }
    const int64_t x = v.get<int64_t>();
    const size_t i = offsets.size();
    if (i == 0 && x != 0) return FieldError(origin, "partitions.offsets", "must start at 0, got " + std::to_string(x));
    if (i > 0 && x < offsets.back()) {
      return FieldError(origin, "partitions.offsets",
                        "must be non-decreasing, but entry " + std::to_string(i) + " (" + std::to_string(x) +
                            ") < entry " + std::to_string(i - 1) + " (" + std::to_string(offsets.back()) + ")");
    }
    offsets.push_back(x);
  }
  if (offsets.back() != m.num_nodes) {
    return FieldError(origin, "partitions.offsets",
                      "must end at num_nodes=" + std::to_string(m.num_nodes) + ", got " +
                          std::to_string(offsets.back()));
  }
  return offsets;
}

StatusOr<DatasetManifest> ReadManifest(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return ErrnoError(path + ": cannot read dataset manifest (stat)", errno);
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return IoError(path + ": cannot open dataset manifest for reading");
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return IoError(path + ": read error");
  json j;
  try {
    j = json::parse(ss.str());
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 1e999
    return DataLoss(path + ": manifest is not valid JSON: " + e.what());
  }
  DatasetManifest m;
  FS_RETURN_IF_ERROR(ParseManifest(j, path, &m));
  return m;
}

}  // namespace foresight::storage
